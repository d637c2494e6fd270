import { z } from 'zod';
import type { ProtocolError } from '../realtime/protocol-error.ts';

/** The sixteen DTMF keys (RFC 4733 events 0-15): digits, `*`, `#` and the A-D column. */
export const DtmfDigitSchema = z
  .string()
  .regex(/^[0-9*#A-D]$/i, 'a DTMF digit is one of 0-9, *, #, A-D')
  .transform((digit) => digit.toUpperCase());

export type DtmfParse = { ok: true; digit: string } | { ok: false; error: ProtocolError };

export function parseDtmfDigit(digit: unknown): DtmfParse {
  const parsed = DtmfDigitSchema.safeParse(digit);
  if (parsed.success) return { ok: true, digit: parsed.data };
  return {
    ok: false,
    error: {
      code: 'invalid_event',
      message: `dtmf digit ${JSON.stringify(digit)}: ${parsed.error.issues[0]?.message}`,
    },
  };
}

/** The RFC 4733 event code of a digit (0-9, * = 10, # = 11, A-D = 12-15), and back. */
const KEYS = '0123456789*#ABCD';

export function dtmfEventCode(digit: string): number | undefined {
  const index = KEYS.indexOf(digit.toUpperCase());
  return index < 0 ? undefined : index;
}

export function dtmfDigitOf(eventCode: number): string | undefined {
  return Number.isInteger(eventCode) && eventCode >= 0 && eventCode < KEYS.length ? KEYS[eventCode] : undefined;
}
