import { z } from 'zod';
import type { VenusFunction } from '../function-definition.ts';
import { callTargetIn } from './call-number.ts';
import { SipControlClient, type SipControlOptions } from './sip-control-client.ts';

export const TransferCallArgsSchema = z.object({
  to: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .optional()
    .describe("Whom to transfer to (a number or sip: URI); omitted: the bridge's configured human desk"),
});
export type TransferCallArgs = z.infer<typeof TransferCallArgsSchema>;

const WANTS_TRANSFER =
  /\b(transfer|put me through|connect me|hand (me )?over|forward (me|the call))\b|\b(speak|talk) (to|with) (a |an )?(human|person|agent|operator|someone|representative)\b/i;

/**
 * Hands the phone call this delegation came from to a human (blind transfer: the SIP bridge sends
 * REFER and, once the far end reports the human answered, hangs up its own leg). On failure the
 * call stays with the assistant and the result says so. The session is the delegation's own
 * (`ctx.session`): a function can only transfer the call it was asked from. Only registered when
 * the bridge's control API is configured.
 *
 * @example
 *   const transfer = createTransferCall({ url: 'http://127.0.0.1:5090', token });
 *   await transfer.run({}, ctx); // speech: "You're through to someone now."
 */
export function createTransferCall(options: SipControlOptions): VenusFunction<TransferCallArgs> {
  const client = new SipControlClient(options);
  return {
    name: 'transfer_call',
    description: 'Transfers this phone call to a human (an agent, operator or a given number).',
    parameters: TransferCallArgsSchema,
    delivery: 'interrupt',
    examples: [
      'transfer me to a human',
      'can I speak to a person',
      'put me through to an agent',
      'transfer the call to 2000',
    ],
    keywords: ['transfer', 'human', 'person', 'agent', 'operator', 'representative', 'through', 'connect'],
    extract(query) {
      if (!WANTS_TRANSFER.test(query)) return null;
      const to = callTargetIn(`call ${query}`);
      return to === null ? {} : { to };
    },
    async run({ to }, ctx) {
      ctx.progress('transferring the call');
      await client.transfer(ctx.session, to, ctx.signal);
      return {
        data: { session: ctx.session, to: to ?? null, transferred: true },
        speech: "You're through to someone now.",
      };
    },
  };
}
