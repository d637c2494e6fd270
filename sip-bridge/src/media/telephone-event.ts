/**
 * RFC 4733 telephone-events (DTMF) in RTP: one event is several packets with the same RTP
 * timestamp, the last three with the End bit. A digit is reported once, at its first packet;
 * the timestamps of the last 16 events are kept to recognise their other packets.
 */
const DIGITS = '0123456789*#ABCD';

export function readTelephoneEvent(payload: Uint8Array): { digit: string; end: boolean } | undefined {
  if (payload.length < 4) return undefined;
  const digit = DIGITS[payload[0]!];
  return digit === undefined ? undefined : { digit, end: (payload[1]! & 0x80) !== 0 };
}

export class TelephoneEvents {
  readonly #seen: number[] = [];

  /** The digit of a new event, or undefined for a repeat packet or a non-digit event. */
  accept(timestamp: number, payload: Uint8Array): string | undefined {
    const event = readTelephoneEvent(payload);
    if (event === undefined || this.#seen.includes(timestamp)) return undefined;
    this.#seen.push(timestamp);
    if (this.#seen.length > 16) this.#seen.shift();
    return event.digit;
  }
}
