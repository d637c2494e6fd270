import { VenusError } from '@venus/protocol';
import type { CallSession } from '../../../edge/src/telephony/call-session.ts';

/**
 * Resolves once the worker has opened the call's session; rejects with its reason (full,
 * draining, unreachable) or with `model_unavailable` after `timeoutMs`. Inbound calls wait on it
 * before their 200, outbound ones before their INVITE: a session that cannot open never becomes a
 * call that is answered and then hung up.
 */
export async function sessionOpened(session: CallSession, timeoutMs = 10_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      session.opened,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new VenusError('model_unavailable', 'the worker did not open the session in time')),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
