import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { createLogger } from '@venus/protocol';
import { RtpHeader, RtpPacket } from 'werift';
import { JitterBuffer } from './jitter-buffer.ts';
import { readRtp } from './rtp-validity.ts';
import type { MediaOffer } from './sdp.ts';
import { TelephoneEvents } from './telephone-event.ts';

const log = createLogger('sip.rtp');

/** Largest G.711 payload accepted: 60 ms (some phones send 30 or 40 ms packets). */
const MAX_AUDIO_PAYLOAD = 480;

export interface RtpLegStats {
  packetsIn: number;
  packetsOut: number;
  /** Inbound packets refused: not valid RTP v2 (rtp-validity.ts), unknown payload type, oversized, or from elsewhere. */
  refused: number;
  late: number;
  concealed: number;
  digits: number;
}

export interface RtpLegOptions {
  /** Local address to bind and to put in the SDP answer. */
  address: string;
  onAudio(frame: Uint8Array): void;
  onDigit(digit: string): void;
}

/**
 * One call's RTP (RFC 3550) on its own UDP port: packets made with werift's RTP module, read by
 * `readRtp` (rtp-validity.ts).
 * In: G.711 through a small jitter buffer (reordering, concealment), telephone-events as digits;
 * packets must come from the negotiated address. Out: each 20 ms frame the call core paces is sent
 * at once as one packet (RTP timestamp +160 a frame, marker on the first of a talkspurt); while the
 * remote side does not receive (hold: sendonly/inactive offers) frames are not sent.
 */
export class RtpLeg {
  readonly stats: RtpLegStats = { packetsIn: 0, packetsOut: 0, refused: 0, late: 0, concealed: 0, digits: 0 };
  readonly #socket: Socket;
  readonly #options: RtpLegOptions;
  readonly #events = new TelephoneEvents();
  readonly #ssrc = randomInt(1, 2 ** 31);
  #seq = randomInt(0, 0xffff);
  #timestamp = randomInt(0, 2 ** 31);
  #offer: MediaOffer | undefined;
  #jitter: JitterBuffer | undefined;
  #port = 0;
  #closed = false;

  private constructor(options: RtpLegOptions) {
    this.#options = options;
    this.#socket = createSocket('udp4');
    this.#socket.on('message', (bytes, remote) => this.#receive(bytes, remote.address));
    this.#socket.on('error', (error) => log.debug({ err: error }, 'RTP socket error'));
  }

  static async open(options: RtpLegOptions): Promise<RtpLeg> {
    const leg = new RtpLeg(options);
    await new Promise<void>((resolve, reject) => {
      leg.#socket.once('error', reject);
      leg.#socket.bind(0, options.address, () => {
        leg.#socket.off('error', reject);
        resolve();
      });
    });
    leg.#port = leg.#socket.address().port;
    return leg;
  }

  get port(): number {
    return this.#port;
  }

  get sending(): boolean {
    const o = this.#offer;
    return o !== undefined && !o.held && o.direction !== 'sendonly' && o.direction !== 'inactive';
  }

  /** The (re-)negotiated remote side: where to send, which payload types to read. */
  configure(offer: MediaOffer): void {
    if (this.#jitter === undefined || this.#offer?.law !== offer.law) {
      this.#jitter?.flush();
      this.#jitter = new JitterBuffer({
        silence: offer.law === 'pcmu' ? 0xff : 0xd5,
        onFrame: (f) => this.#options.onAudio(f),
      });
    }
    this.#offer = offer;
  }

  sendAudio(frame: Uint8Array, first: boolean): void {
    const offer = this.#offer;
    if (this.#closed || offer === undefined || !this.sending) return;
    const header = new RtpHeader({
      payloadType: offer.payloadType,
      sequenceNumber: this.#seq,
      timestamp: this.#timestamp,
      ssrc: this.#ssrc,
      marker: first,
    });
    this.#seq = (this.#seq + 1) & 0xffff;
    this.#timestamp = (this.#timestamp + frame.length) >>> 0;
    this.stats.packetsOut += 1;
    this.#socket.send(new RtpPacket(header, Buffer.from(frame)).serialize(), offer.port, offer.address);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#jitter?.flush();
    this.#socket.close();
  }

  #receive(bytes: Buffer, from: string): void {
    const offer = this.#offer;
    if (this.#closed || offer === undefined) return;
    const read = readRtp(bytes);
    if ('problem' in read) {
      this.stats.refused += 1;
      return;
    }
    const { payloadType, sequenceNumber, timestamp, payload } = read.packet;
    if (from !== offer.address && offer.address !== '0.0.0.0') {
      this.stats.refused += 1;
      return;
    }
    this.stats.packetsIn += 1;
    if (payloadType === offer.dtmfPayloadType && offer.dtmfPayloadType !== undefined) {
      const digit = this.#events.accept(timestamp, payload);
      if (digit !== undefined) {
        this.stats.digits += 1;
        this.#options.onDigit(digit);
      }
      return;
    }
    if (payloadType !== offer.payloadType || payload.length === 0 || payload.length > MAX_AUDIO_PAYLOAD) {
      this.stats.refused += 1;
      return;
    }
    const jitter = this.#jitter!;
    // A copy: the jitter buffer holds it past this datagram.
    jitter.push(sequenceNumber, payload.slice());
    this.stats.late = jitter.stats.late + jitter.stats.duplicate;
    this.stats.concealed = jitter.stats.concealed;
  }
}
