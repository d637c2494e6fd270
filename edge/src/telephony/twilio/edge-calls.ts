import type { SessionConfig, WorkerLink } from '@venus/protocol';
import type { EdgeAuth } from '../../auth/edge-auth.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Clock } from '../../realtime/clock.ts';
import { randomId } from '../../realtime/ids.ts';
import type { ProtocolError } from '../../realtime/protocol-error.ts';
import { applySessionUpdate, initialSessionState } from '../../realtime/session-state.ts';
import { meterSession, type Tenancy } from '../../tenancy/tenancy.ts';
import { type CallMedia, CallSession } from '../call-session.ts';
import type { G711Law } from '../g711-law.ts';

export interface EdgeCallDeps {
  link: WorkerLink;
  /** The edge's default assistant; the principal's session settings (from its token) go on top. */
  config: SessionConfig;
  tenancy: Tenancy;
  auth: EdgeAuth;
  clock?: Clock;
  /** Twilio buffers what it is sent: a lead of 100 ms rides out network jitter, and `clear` empties it. */
  leadMs?: number;
}

/**
 * Opens a call on the edge as the realtime route opens a WebSocket session: the tenant's session
 * quota, its input audio budget and usage (SessionMetering), and the end of the session when the
 * key behind the token is revoked. The assistant is the edge's default with the token's settings
 * (instructions, voice, `venus.delivery_policy`, `venus.chunk_ms`) applied.
 */
export function openEdgeCall(
  deps: EdgeCallDeps,
  media: CallMedia,
  principal: Principal,
  law: G711Law,
): CallSession | ProtocolError {
  const { tenancy, auth } = deps;
  const tenant = principal.tenant;
  let config = deps.config;
  if (principal.session !== undefined) {
    const state = { ...initialSessionState('call', config), playbackAcks: true };
    const applied = applySessionUpdate(state, principal.session);
    if (!applied.ok) return applied.error;
    config = applied.state.config;
  }
  const sessionId = randomId('sess');
  const opened = tenancy.quotas.openSession(tenant, sessionId);
  if (!opened.ok) return { code: 'rate_limited', message: opened.message };
  let forgetKey: (() => void) | undefined;
  const hooks = meterSession(tenancy, tenant, sessionId, () => forgetKey?.());
  const call = new CallSession({
    link: deps.link,
    media,
    tenant,
    config,
    law,
    sessionId,
    hooks,
    leadMs: deps.leadMs ?? 100,
    ...(deps.clock === undefined ? {} : { clock: deps.clock }),
  });
  tenancy.meter.add(tenant, { sessions: 1 });
  call.start();
  forgetKey = auth.sessions.add(principal.keyId, {
    get closed() {
      return call.closed;
    },
    end: (message) => {
      call.hangUp(`${message}: the call ends`);
      media.hangUp(`${message}: the call ends`);
    },
  });
  return call;
}
