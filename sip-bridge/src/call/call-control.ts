import { createLogger, VenusError, type WorkerLink } from '@venus/protocol';
import { resolveOutboundTarget } from '../routing/outbound-target.ts';
import type { RoutingConfig } from '../routing/routing-config.ts';
import type { OpenCall } from '../sip/call-handle.ts';
import type { UserAgent } from '../sip/user-agent.ts';
import { CallFailure } from './call-failure.ts';
import { OutboundCall, type PlaceCallRequest } from './outbound-call.ts';

const log = createLogger('sip.control');

export interface CallSummary {
  session: string;
  callId: string;
  direction: 'inbound' | 'outbound';
}

interface InboundEntry {
  callId: string;
  dialogKey: string;
}

export interface CallControlOptions {
  ua: UserAgent;
  link: WorkerLink;
  mediaAddress: string;
  routing: RoutingConfig;
}

/**
 * The bridge's calls by session id, for whoever acts on a call from outside SIP (the control API,
 * and through it the harness's call_number / transfer_call): places outbound calls, transfers
 * inbound or outbound ones by REFER, hangs them up. Inbound calls are learnt as they are opened
 * (`inboundOpener` wraps the UA's opener and notes each answered call's session).
 */
export class CallControl {
  readonly #options: CallControlOptions;
  readonly #inbound = new Map<string, InboundEntry>();
  readonly #outbound = new Map<string, OutboundCall>();
  readonly #from: string;

  constructor(options: CallControlOptions) {
    this.#options = options;
    this.#from = options.routing.outbound?.from ?? `sip:venus@${options.ua.host}:${options.ua.port}`;
  }

  /** The UA's opener, noting which session each answered inbound call is (for transfers by session id). */
  inboundOpener(open: OpenCall): OpenCall {
    return async (context) => {
      const handle = await open(context);
      const session = handle.sessionId;
      this.#inbound.set(session, { callId: context.callId, dialogKey: context.dialogKey });
      return {
        ...handle,
        end: (reason) => {
          this.#inbound.delete(session);
          handle.end(reason);
        },
      };
    };
  }

  list(): CallSummary[] {
    return [
      ...[...this.#inbound].map(([session, e]) => ({ session, callId: e.callId, direction: 'inbound' as const })),
      ...[...this.#outbound.values()].map((c) => ({
        session: c.sessionId,
        callId: c.callId,
        direction: 'outbound' as const,
      })),
    ];
  }

  /** Places a call and resolves once it is answered (see OutboundCall.place for the errors). */
  async place(request: PlaceCallRequest): Promise<CallSummary> {
    const { ua, link, mediaAddress, routing } = this.#options;
    const call = await OutboundCall.place(
      {
        ua,
        link,
        mediaAddress,
        outbound: routing.outbound,
        from: this.#from,
        onEnd: (c) => this.#outbound.delete(c.sessionId),
      },
      request,
    );
    this.#outbound.set(call.sessionId, call);
    return { session: call.sessionId, callId: call.callId, direction: 'outbound' };
  }

  /**
   * Blind transfer of the call of `session` to `to` (or the routing file's outbound.transferTo).
   * Resolves once the far end reports the target answered (the bridge has hung up its leg);
   * throws `transfer_failed` with the SIP status otherwise, and the call stays with the assistant.
   */
  async transfer(session: string, to: string | undefined): Promise<void> {
    const outbound = this.#options.routing.outbound;
    const wanted = to ?? outbound?.transferTo;
    if (wanted === undefined)
      throw new VenusError('invalid_arguments', 'no transfer target given and no outbound.transferTo configured');
    const target = await resolveOutboundTarget(outbound, wanted);
    const placed = this.#outbound.get(session);
    const inbound = this.#inbound.get(session);
    let pending: Promise<{ transferred: boolean; status?: number; reason?: string }>;
    if (placed !== undefined) pending = placed.transfer(target.uri);
    else if (inbound !== undefined) pending = this.#options.ua.transfer(inbound.dialogKey, target.uri, this.#from);
    else throw new VenusError('not_found', `no call holds session ${session}`);
    const outcome = await pending;
    if (!outcome.transferred) {
      log.info({ session, to: target.uri, status: outcome.status }, 'transfer failed; the call stays');
      throw new CallFailure(
        'transfer_failed',
        outcome.status ?? 500,
        `the transfer to ${target.uri} failed: ${outcome.status} ${outcome.reason}`,
      );
    }
    log.info({ session, to: target.uri }, 'call transferred');
  }

  /** Hangs up the call of `session` (BYE); false when no call holds it. */
  hangUp(session: string, reason: string): boolean {
    const placed = this.#outbound.get(session);
    if (placed !== undefined) {
      placed.hangUp(reason);
      return true;
    }
    const inbound = this.#inbound.get(session);
    if (inbound === undefined) return false;
    return this.#options.ua.hangUpCall(inbound.dialogKey, reason);
  }

  close(): void {
    for (const call of [...this.#outbound.values()]) call.hangUp('the SIP bridge is stopping');
  }
}
