import { z } from 'zod';
import type { VenusFunction } from '../function-definition.ts';
import { SipControlClient, type SipControlOptions } from './sip-control-client.ts';

export const CallNumberArgsSchema = z.object({
  to: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .describe('The phone number (digits, optionally with a leading +) or sip: URI to call'),
});
export type CallNumberArgs = z.infer<typeof CallNumberArgsSchema>;

const SIP_URI = /\bsips?:[^\s"'<>]+/i;
const PHONE = /\+?\d[\d\s().-]{1,24}\d/;

/** The number or SIP URI a request to call carries, or null ("call +1 555 0100", "dial sip:desk@pbx"). */
export function callTargetIn(query: string): string | null {
  if (!/\b(call|dial|phone|ring)\b/i.test(query)) return null;
  const uri = SIP_URI.exec(query)?.[0]?.replace(/[.,!?)]+$/, '');
  if (uri !== undefined) return uri;
  const number = PHONE.exec(query)?.[0]?.replace(/[\s().-]/g, '');
  return number !== undefined && number.replace('+', '').length >= 2 ? number : null;
}

/**
 * Places a phone call through the SIP bridge (its control API): the call becomes a session of its
 * own with the bridge's outbound assistant, and this function's result says whether it was
 * answered. Which numbers may be called is the bridge's `outbound.allow` list, not the planner's.
 * Only registered when the bridge's control API is configured (VENUS_SIP_CONTROL_URL and token).
 *
 * @example
 *   const callNumber = createCallNumber({ url: 'http://127.0.0.1:5090', token });
 *   await callNumber.run({ to: '+15550100' }, ctx); // speech: "I called +15550100 and they answered."
 */
export function createCallNumber(options: SipControlOptions): VenusFunction<CallNumberArgs> {
  const client = new SipControlClient(options);
  return {
    name: 'call_number',
    description: 'Places a phone call to a number or SIP address; the assistant talks to whoever answers.',
    parameters: CallNumberArgsSchema,
    examples: ['call +1 555 0100', 'dial 2000', 'phone the front desk at sip:desk@pbx.example.com', 'ring 555 0199'],
    keywords: ['call', 'dial', 'phone', 'ring', 'number', 'telephone', 'sip'],
    extract(query) {
      const to = callTargetIn(query);
      return to === null ? null : { to };
    },
    async run({ to }, ctx) {
      ctx.progress(`calling ${to}`);
      const placed = await client.placeCall(to, ctx.signal);
      return {
        data: { to, session: placed.session, callId: placed.callId, answered: true },
        speech: `I called ${to} and they answered.`,
      };
    },
  };
}
