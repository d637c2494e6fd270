import { createLogger, type SessionConfig, VenusError, type WorkerLink } from '@venus/protocol';
import { readOffer } from '../media/sdp.ts';
import type { OutboundConfig } from '../routing/outbound-config.ts';
import { resolveOutboundTarget } from '../routing/outbound-target.ts';
import type { Dialog } from '../sip/dialog.ts';
import { header, type SipRequest } from '../sip/message.ts';
import { OutboundInvite } from '../sip/outbound-invite.ts';
import { ReferTransfer, type TransferOutcome } from '../sip/refer-transfer.ts';
import type { ReplyExtra } from '../sip/sip-requester.ts';
import type { UserAgent } from '../sip/user-agent.ts';
import { CallFailure } from './call-failure.ts';
import { OutboundMedia } from './outbound-media.ts';

const log = createLogger('sip.outbound');

export interface PlaceCallRequest {
  /** A number (through the outbound gateway) or a sip: URI. */
  to: string;
  tenant?: string;
  assistant?: SessionConfig;
  ringTimeoutMs?: number;
  /** Aborted: the caller gave up (CANCEL while ringing). */
  signal?: AbortSignal;
}

export interface OutboundDeps {
  ua: UserAgent;
  link: WorkerLink;
  mediaAddress: string;
  outbound: OutboundConfig | undefined;
  /** Our identity (From, Referred-By). */
  from: string;
  /** The call ended (any side, any reason). */
  onEnd(call: OutboundCall): void;
}

type Reply = (status: number, extra?: ReplyExtra) => void;

/**
 * A call the bridge placed (the bridge as UAC), from the INVITE to the BYE: the session is open
 * before anything is dialled (OutboundMedia), the INVITE rings until answered, refused, timed out
 * or given up (`signal`: CANCEL), and once answered the call is an ordinary session on the same
 * call core as an inbound one. In its dialog it takes BYE, re-INVITE (hold/resume), MESSAGE,
 * INFO and the NOTIFYs of its own REFER. Holds one of the UA's `maxCalls` slots throughout.
 */
export class OutboundCall {
  readonly sessionId: string;
  readonly callId: string;
  readonly to: string;
  readonly #deps: OutboundDeps;
  readonly #media: OutboundMedia;
  readonly #dialog: Dialog;
  readonly #release: () => void;
  readonly #unregister: () => void;
  #transfer: ReferTransfer | undefined;
  #maxTimer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;

  private constructor(
    deps: OutboundDeps,
    media: OutboundMedia,
    invite: OutboundInvite,
    dialog: Dialog,
    to: string,
    release: () => void,
  ) {
    this.#deps = deps;
    this.#media = media;
    this.#dialog = dialog;
    this.#release = release;
    this.sessionId = media.sessionId;
    this.callId = invite.callId;
    this.to = to;
    this.#unregister = deps.ua.registerDialog(dialog.key, {
      onRequest: (request, reply) => {
        if (reply !== undefined) this.#onRequest(request, reply);
      },
      onStrayResponse: () => invite.reAck(),
    });
    const maxMs = deps.outbound?.maxCallMs;
    if (maxMs !== undefined)
      this.#maxTimer = setTimeout(() => this.hangUp('the call reached its maximum duration'), maxMs);
  }

  /** Places the call; resolves once it is answered, or throws a coded error (`call_failed` with the SIP status). */
  static async place(deps: OutboundDeps, request: PlaceCallRequest): Promise<OutboundCall> {
    const target = await resolveOutboundTarget(deps.outbound, request.to);
    const outbound = deps.outbound!;
    const release = deps.ua.holdSlot();
    if (release === undefined)
      throw new VenusError('rate_limited', 'the bridge holds as many calls as it may (VENUS_SIP_MAX_CALLS)');
    let media: OutboundMedia | undefined;
    let invite: OutboundInvite | undefined;
    let call: OutboundCall | undefined;
    try {
      media = await OutboundMedia.open({
        link: deps.link,
        mediaAddress: deps.mediaAddress,
        tenant: request.tenant ?? outbound.tenant,
        config: request.assistant ?? outbound.assistant,
        law: outbound.codec,
        onHangUp: (reason) => {
          if (call !== undefined) call.hangUp(reason);
          else invite?.cancel(487, `the session closed: ${reason}`);
        },
      });
      if (request.signal?.aborted)
        throw new VenusError('session_closed', 'the caller gave up before the call was placed');
      const ringing = new OutboundInvite({
        requester: deps.ua,
        uri: target.uri,
        peer: target.peer,
        from: deps.from,
        sdp: media.offer,
        ...(target.credentials === undefined ? {} : { credentials: target.credentials }),
        ringTimeoutMs: request.ringTimeoutMs ?? outbound.ringTimeoutMs,
      });
      invite = ringing;
      const giveUp = () => ringing.cancel(487, 'the caller gave up');
      request.signal?.addEventListener('abort', giveUp, { once: true });
      const outcome = await ringing.outcome.finally(() => request.signal?.removeEventListener('abort', giveUp));
      if (!outcome.answered) {
        throw new CallFailure(
          'call_failed',
          outcome.status,
          `${target.uri} did not answer: ${outcome.status} ${outcome.reason}`,
        );
      }
      const answer = readOffer(outcome.response.body);
      if ('error' in answer) {
        call = new OutboundCall(deps, media, ringing, outcome.dialog, request.to, release);
        call.hangUp(`unusable SDP answer: ${answer.error}`);
        throw new CallFailure('call_failed', 488, `${target.uri} answered with unusable SDP: ${answer.error}`);
      }
      media.connect(answer);
      call = new OutboundCall(deps, media, ringing, outcome.dialog, request.to, release);
      log.info({ callId: ringing.callId, session: media.sessionId, to: target.uri }, 'outbound call answered');
      return call;
    } catch (error) {
      if (call === undefined) {
        release();
        media?.end(error instanceof Error ? error.message : 'the call was not placed');
      }
      throw error;
    }
  }

  /** Blind transfer (REFER); on success the bridge hangs up its leg. */
  transfer(referTo: string): Promise<TransferOutcome> {
    if (this.#ended) throw new VenusError('not_found', 'the call has ended');
    if (this.#transfer !== undefined && !this.#transfer.settled)
      throw new VenusError('transfer_failed', 'a transfer of this call is already under way');
    const transfer = new ReferTransfer({
      requester: this.#deps.ua,
      dialog: this.#dialog,
      referTo,
      referredBy: this.#deps.from,
    });
    this.#transfer = transfer;
    return transfer.outcome.then((outcome) => {
      if (outcome.transferred) this.hangUp('the call was transferred');
      return outcome;
    });
  }

  /** The bridge ends the call: BYE. */
  hangUp(reason: string): void {
    if (this.#ended) return;
    const { ua } = this.#deps;
    const dialog = this.#dialog;
    const bye = dialog.request(
      'BYE',
      { transport: dialog.peer.protocol.toUpperCase(), host: ua.host, port: ua.port },
      ua.contact(dialog.peer),
    );
    bye.headers.push(['reason', `Q.850;cause=16;text="${reason.replace(/"/g, "'")}"`]);
    ua.request(bye, dialog.peer, (outcome) => {
      if ('timeout' in outcome) log.info({ callId: this.callId }, 'BYE not answered');
    });
    this.#end(reason);
  }

  #onRequest(request: SipRequest, reply: Reply): void {
    if (this.#ended) {
      reply(481);
      return;
    }
    const type = (header(request, 'content-type') ?? '').toLowerCase();
    switch (request.method) {
      case 'BYE':
        reply(200);
        this.#end('the far end hung up');
        return;
      case 'NOTIFY':
        reply(this.#transfer?.notify(request) ?? 481);
        return;
      case 'INVITE': {
        const offer = readOffer(request.body);
        if ('error' in offer) {
          reply(488, { headers: [['warning', `304 venus "${offer.error}"`]] });
          return;
        }
        reply(200, {
          headers: [
            ['contact', this.#deps.ua.contact(this.#dialog.peer)],
            ['content-type', 'application/sdp'],
          ],
          body: this.#media.reanswer(offer),
        });
        return;
      }
      case 'MESSAGE':
        if (type.startsWith('text/plain') && request.body.trim().length > 0) {
          this.#media.text(request.body.trim().slice(0, 20_000));
          reply(200);
        } else reply(415);
        return;
      case 'INFO': {
        const signal = /Signal\s*=\s*([0-9*#A-D])/i.exec(request.body)?.[1];
        if (type.startsWith('application/dtmf-relay') && signal !== undefined) {
          this.#media.digit(signal.toUpperCase());
          reply(200);
        } else reply(415);
        return;
      }
      default:
        reply(405, { headers: [['allow', 'INVITE, ACK, BYE, MESSAGE, INFO, NOTIFY']] });
    }
  }

  #end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#maxTimer);
    this.#unregister();
    this.#release();
    this.#transfer?.abandon(`the call ended: ${reason}`);
    this.#media.end(reason);
    this.#deps.onEnd(this);
  }
}
