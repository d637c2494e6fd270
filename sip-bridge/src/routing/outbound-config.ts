import { SessionConfigSchema } from '@venus/protocol';
import { z } from 'zod';

/** How long the bridge keeps a call before it hangs up (BYE); unset: until either side ends it. */
export const MaxCallMsSchema = z
  .number()
  .int()
  .positive()
  .max(24 * 3_600_000)
  .optional();

const sipUri = z
  .string()
  .max(256)
  .regex(/^sip:[^\s<>"]+$/i, 'a sip: URI such as sip:gateway.example.com:5060');

const pattern = z
  .string()
  .min(1)
  .max(256)
  .refine((source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  }, 'not a valid regular expression');

/**
 * Outbound calls and transfers (the routing file's `outbound`; docs/telephony-sip.md). Numbers go to
 * `gateway` (a trunk or PBX) as `sip:NUMBER@gateway`; a SIP URI target goes to its own host. A
 * target is called only if it matches one of `allow` (by default numbers only, never SIP URIs),
 * which is what keeps a delegation from calling anywhere it likes. `username`/`password` answer the
 * gateway's digest challenge (401/407).
 */
export const OutboundSchema = z
  .object({
    gateway: sipUri.optional(),
    username: z.string().min(1).max(128).optional(),
    password: z.string().min(1).max(256).optional(),
    /** Our identity in From (the caller ID the far end sees). Default sip:venus@<VENUS_SIP_HOST>. */
    from: sipUri.optional(),
    /** The one G.711 law offered: the session's codec is fixed before the call is placed. */
    codec: z.enum(['pcmu', 'pcma']).default('pcmu'),
    tenant: z.string().min(1).max(64).default('default'),
    assistant: SessionConfigSchema.default({ chunkMs: 160, deliveryPolicy: 'when_idle', voice: 'en-us' }),
    allow: z.array(pattern).max(100).default(['^\\+?[0-9]{2,15}$']),
    /** Where `transfer_call` sends a caller when it names no one (a human's desk or queue). */
    transferTo: z.string().min(1).max(256).optional(),
    /** CANCEL after this long without an answer. */
    ringTimeoutMs: z.number().int().min(1000).max(300_000).default(30_000),
    /** The bridge hangs up (BYE) after this long; unset: until either side ends the call. */
    maxCallMs: MaxCallMsSchema,
  })
  .refine((o) => (o.username === undefined) === (o.password === undefined), {
    message: 'username and password go together',
    path: ['password'],
  });

export type OutboundConfig = z.infer<typeof OutboundSchema>;
