import { createLogger, VenusError } from '@venus/protocol';
import { type MediaOffer, readOffer } from '../media/sdp.ts';
import { type Route, type RoutingConfig, routeFor } from '../routing/routing-config.ts';
import type { CallHandle, OpenCall } from './call-handle.ts';
import { Dialog, newTag } from './dialog.ts';
import { DigestAuth } from './digest.ts';
import {
  cseq,
  header,
  parseMessage,
  responseTo,
  type SipHeaders,
  type SipRequest,
  type SipResponse,
  serialise,
  tagOf,
} from './message.ts';
import { reasonPhrase } from './reasons.ts';
import { ReferTransfer, type TransferOutcome } from './refer-transfer.ts';
import type { DialogHandler, SipRequester } from './sip-requester.ts';
import type { TimerHost } from './timers.ts';
import { type ClientOutcome, type ServerTransaction, type SipPeer, TransactionLayer } from './transactions.ts';

const log = createLogger('sip.ua');

export interface UserAgentOptions {
  routing: RoutingConfig;
  openCall: OpenCall;
  send(bytes: Buffer, peer: SipPeer): void;
  /** Our address as put in Via and Contact. */
  host: string;
  port: number;
  /** Calls at once (ringing or answered); past it new INVITEs get 486. Default 500. */
  maxCalls?: number;
  timers?: TimerHost;
}

export interface UserAgentStats {
  calls: number;
  malformed: number;
  answered: number;
}

const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, MESSAGE, INFO, NOTIFY';
const KNOWN = new Set(['REGISTER', 'SUBSCRIBE', 'NOTIFY', 'PRACK', 'UPDATE', 'REFER', 'PUBLISH']);

interface Call {
  dialog: Dialog;
  invite: ServerTransaction;
  handle: CallHandle | undefined;
  ringTimer: unknown;
  maxTimer: unknown;
  ended: boolean;
  sdpVersion: number;
  /** A REFER of ours under way in this call. */
  transfer: ReferTransfer | undefined;
}

/**
 * The bridge's SIP user agent (UAS): routes and authenticates INVITEs, rings, answers with an SDP
 * answer once the call's media and session are open, and handles ACK, BYE from either side, CANCEL
 * while ringing (487), re-INVITE (hold, resume), in-dialog MESSAGE (text) and INFO (dtmf-relay),
 * OPTIONS, 481 for unknown dialogs, 405/501 for methods it does not serve, and a 400-class answer
 * for every malformed request that can be answered. Calls are bounded by `maxCalls`, outbound
 * ones (held through `holdSlot`) included. It also sends the bridge's own requests
 * (`SipRequester`): outbound INVITEs and their dialogs (`registerDialog`), and REFER transfers of
 * its inbound calls (`transfer`), whose NOTIFYs it routes back.
 */
export class UserAgent implements SipRequester {
  readonly stats: UserAgentStats = { calls: 0, malformed: 0, answered: 0 };
  readonly #options: UserAgentOptions;
  readonly #layer: TransactionLayer;
  readonly #auth: DigestAuth;
  readonly #calls = new Map<string, Call>();
  readonly #byInvite = new Map<string, Call>();
  readonly #maxCalls: number;
  /** Dialogs held elsewhere (outbound calls): their in-dialog requests go to their handler. */
  readonly #dialogs = new Map<string, DialogHandler>();
  /** The last re-INVITE in each held dialog: its 2xx is retransmitted until the dialog's ACK. */
  readonly #heldInvites = new Map<string, ServerTransaction>();
  /** Outbound calls holding a slot of `maxCalls`. */
  #external = 0;

  constructor(options: UserAgentOptions) {
    this.#options = options;
    this.#maxCalls = options.maxCalls ?? 500;
    this.#auth = new DigestAuth({ realm: options.routing.realm });
    this.#layer = new TransactionLayer({
      send: options.send,
      ...(options.timers === undefined ? {} : { timers: options.timers }),
      onRequest: (request, tx, peer) => this.#onRequest(request, tx, peer),
      onStrayResponse: (response) => this.#onStrayResponse(response),
    });
  }

  /** Calls held: inbound ones ringing or answered, and outbound slots. */
  get activeCalls(): number {
    return this.#calls.size + this.#external;
  }

  get host(): string {
    return this.#options.host;
  }

  get port(): number {
    return this.#options.port;
  }

  get timers(): TimerHost {
    return this.#layer.timers;
  }

  request(request: SipRequest, peer: SipPeer, onOutcome: (outcome: ClientOutcome) => void): void {
    this.#layer.request(request, peer, onOutcome);
  }

  sendRaw(message: SipRequest, peer: SipPeer): void {
    this.#options.send(serialise(message), peer);
  }

  /** A slot of `maxCalls` for an outbound call: its release, or undefined when the bridge is full. */
  holdSlot(): (() => void) | undefined {
    if (this.activeCalls >= this.#maxCalls) return undefined;
    this.#external += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#external -= 1;
    };
  }

  /** Routes the in-dialog requests of `key` (Dialog.key) to `handler` until the returned function is called. */
  registerDialog(key: string, handler: DialogHandler): () => void {
    this.#dialogs.set(key, handler);
    return () => {
      if (this.#dialogs.get(key) === handler) this.#dialogs.delete(key);
      this.#heldInvites.delete(key);
    };
  }

  /**
   * Blind transfer of an answered inbound call (REFER): on success the bridge hangs up its leg
   * (BYE); on failure the call stays. Throws `not_found` for no such answered call and
   * `transfer_failed` when a transfer is already under way.
   */
  transfer(dialogKey: string, referTo: string, referredBy: string): Promise<TransferOutcome> {
    const call = this.#calls.get(dialogKey);
    if (call === undefined || call.ended || call.handle === undefined || call.invite.finalStatus === 0)
      throw new VenusError('not_found', 'no answered call to transfer');
    if (call.transfer !== undefined && !call.transfer.settled)
      throw new VenusError('transfer_failed', 'a transfer of this call is already under way');
    const transfer = new ReferTransfer({ requester: this, dialog: call.dialog, referTo, referredBy });
    call.transfer = transfer;
    return transfer.outcome.then((outcome) => {
      if (outcome.transferred) this.#hangUp(call, 'the call was transferred');
      return outcome;
    });
  }

  receive(bytes: Buffer, peer: SipPeer): void {
    const parsed = parseMessage(bytes);
    if (!parsed.ok) {
      this.stats.malformed += 1;
      this.#refuse(parsed.request, parsed.status, parsed.reason, peer);
      return;
    }
    this.#layer.receive(parsed.message, peer);
  }

  /** A message the transport could not take whole (`head`: its header block): answered if it can be. */
  refuse(head: Buffer, status: number, reason: string, peer: SipPeer): void {
    this.stats.malformed += 1;
    const parsed = parseMessage(head);
    const request = parsed.ok ? (parsed.message.kind === 'request' ? parsed.message : undefined) : parsed.request;
    this.#refuse(request, status, reason, peer);
  }

  #refuse(request: SipRequest | undefined, status: number, reason: string, peer: SipPeer): void {
    if (request === undefined || request.method === 'ACK') {
      log.debug({ peer: `${peer.address}:${peer.port}`, reason }, 'unanswerable SIP message dropped');
      return;
    }
    const warning: SipHeaders = [['warning', `399 venus "${reason}"`]];
    this.#options.send(serialise(responseTo(request, status, reasonPhrase(status), { headers: warning })), peer);
  }

  close(): void {
    for (const call of [...this.#calls.values()]) this.#hangUp(call, 'the SIP bridge is stopping');
    this.#layer.close();
  }

  #onRequest(request: SipRequest, tx: ServerTransaction | undefined, peer: SipPeer): void {
    const held =
      tagOf(header(request, 'to')) === undefined ? undefined : this.#dialogs.get(Dialog.keyOfRequest(request));
    if (held !== undefined && tx !== undefined) {
      if (request.method === 'INVITE') this.#heldInvites.set(Dialog.keyOfRequest(request), tx);
      held.onRequest(request, (status, extra = {}) =>
        tx.respond(responseTo(request, status, reasonPhrase(status), extra)),
      );
      return;
    }
    if (request.method === 'ACK') {
      if (held !== undefined) {
        this.#heldInvites.get(Dialog.keyOfRequest(request))?.acked();
        held.onRequest(request, undefined);
        return;
      }
      const call = this.#calls.get(Dialog.keyOfRequest(request));
      call?.invite.acked();
      return;
    }
    if (tx === undefined) {
      this.#options.send(
        serialise(responseTo(request, 503, 'Service Unavailable', { headers: [['retry-after', '5']] })),
        peer,
      );
      return;
    }
    const reply = (status: number, extra: { headers?: SipHeaders; body?: string } = {}) =>
      tx.respond(responseTo(request, status, reasonPhrase(status), { toTag: newTag(), ...extra }));
    const inDialog = tagOf(header(request, 'to')) !== undefined;
    switch (request.method) {
      case 'INVITE':
        if (inDialog) this.#reInvite(request, tx);
        else this.#invite(request, tx, peer, reply);
        return;
      case 'CANCEL':
        this.#cancel(request, reply);
        return;
      case 'OPTIONS':
        reply(200, {
          headers: [
            ['allow', ALLOW],
            ['accept', 'application/sdp'],
          ],
        });
        return;
      case 'NOTIFY':
        this.#notify(request, reply);
        return;
      case 'BYE':
      case 'MESSAGE':
      case 'INFO':
        this.#inDialog(request, reply);
        return;
      default:
        reply(KNOWN.has(request.method) ? 405 : 501, { headers: [['allow', ALLOW]] });
    }
  }

  #invite(
    request: SipRequest,
    tx: ServerTransaction,
    peer: SipPeer,
    reply: (s: number, e?: { headers?: SipHeaders }) => void,
  ): void {
    const route = routeFor(this.#options.routing, request);
    if (route === undefined) {
      reply(404);
      return;
    }
    if (route.trunk !== undefined) {
      const credentials = header(request, 'authorization') ?? header(request, 'proxy-authorization');
      const verdict = this.#auth.verify(credentials, 'INVITE', route.trunk.username, route.trunk.password);
      if (verdict === 'wrong') {
        reply(403);
        return;
      }
      if (verdict !== 'ok') reply(401, { headers: [['www-authenticate', this.#auth.challenge(verdict === 'stale')]] });
      return;
    }
    const offer = readOffer(request.body);
    if ('error' in offer) {
      reply(488, { headers: [['warning', `304 venus "${offer.error}"`]] });
      return;
    }
    if (this.activeCalls >= this.#maxCalls) {
      reply(486);
      return;
    }
    const dialog = new Dialog(request, newTag(), peer, cseq(request)?.seq ?? 1);
    const call: Call = {
      dialog,
      invite: tx,
      handle: undefined,
      ringTimer: undefined,
      maxTimer: undefined,
      ended: false,
      sdpVersion: 1,
      transfer: undefined,
    };
    this.#calls.set(dialog.key, call);
    this.#byInvite.set(tx.key, call);
    this.stats.calls += 1;
    const ring = (status: number, extra: { headers?: SipHeaders; body?: string } = {}) =>
      tx.respond(responseTo(request, status, reasonPhrase(status), { toTag: dialog.localTag, ...extra }));
    ring(100);
    ring(180, { headers: [['contact', this.contact(peer)]] });
    const timers = this.#layer.timers;
    call.ringTimer = timers.set(() => {
      call.ringTimer = undefined;
      this.#answer(call, route, offer, ring);
    }, route.ringMs);
    if (route.maxCallMs !== undefined) {
      call.maxTimer = timers.set(
        () => this.#hangUp(call, 'the call reached its maximum duration'),
        route.ringMs + route.maxCallMs,
      );
    }
    tx.onNoAck = () => this.#hangUp(call, 'the caller never acknowledged the answer');
  }

  #answer(
    call: Call,
    route: Route,
    offer: MediaOffer,
    ring: (s: number, e?: { headers?: SipHeaders; body?: string }) => void,
  ): void {
    const { dialog } = call;
    this.#options
      .openCall({
        callId: dialog.callId,
        dialogKey: dialog.key,
        route,
        offer,
        hangUp: (reason) => this.#hangUp(call, reason),
      })
      .then(
        (handle) => {
          if (call.ended) {
            handle.end('the caller cancelled');
            return;
          }
          call.handle = handle;
          this.stats.answered += 1;
          ring(200, {
            headers: [
              ['contact', this.contact(dialog.peer)],
              ['content-type', 'application/sdp'],
              ['allow', ALLOW],
            ],
            body: handle.answer,
          });
        },
        (error: unknown) => {
          log.warn({ err: error, callId: dialog.callId }, 'the call could not be opened');
          this.#forget(call);
          ring(503, { headers: [['retry-after', '5']] });
        },
      );
  }

  #reInvite(request: SipRequest, tx: ServerTransaction): void {
    const call = this.#calls.get(Dialog.keyOfRequest(request));
    const reply = (status: number, extra: { headers?: SipHeaders; body?: string } = {}) =>
      tx.respond(responseTo(request, status, reasonPhrase(status), extra));
    if (call === undefined || call.ended) {
      reply(481);
      return;
    }
    if (call.handle === undefined || call.invite.state === 'proceeding') {
      reply(491, { headers: [['retry-after', '1']] });
      return;
    }
    const seq = cseq(request)?.seq ?? 0;
    if (seq <= call.dialog.remoteCseq) {
      reply(500, { headers: [['retry-after', '1']] });
      return;
    }
    call.dialog.remoteCseq = seq;
    const offer = readOffer(request.body);
    if ('error' in offer) {
      reply(488, { headers: [['warning', `304 venus "${offer.error}"`]] });
      return;
    }
    call.sdpVersion += 1;
    call.invite = tx;
    tx.onNoAck = () => this.#hangUp(call, 'the caller never acknowledged the re-INVITE answer');
    const body = call.handle.reoffer(offer);
    reply(200, {
      headers: [
        ['contact', this.contact(call.dialog.peer)],
        ['content-type', 'application/sdp'],
      ],
      body,
    });
  }

  /** A NOTIFY about our REFER (RFC 3515 §2.4.4). */
  #notify(request: SipRequest, reply: (s: number) => void): void {
    const call = this.#calls.get(Dialog.keyOfRequest(request));
    if (call?.transfer === undefined || call.ended) {
      reply(481);
      return;
    }
    reply(call.transfer.notify(request));
  }

  /** A response no transaction holds: a 2xx to an outbound INVITE again, for its dialog to ACK. */
  #onStrayResponse(response: SipResponse): void {
    if (response.status < 200 || response.status >= 300 || cseq(response)?.method !== 'INVITE') return;
    const key = Dialog.keyOf(
      header(response, 'call-id') ?? '',
      tagOf(header(response, 'from')) ?? '',
      tagOf(header(response, 'to')) ?? '',
    );
    this.#dialogs.get(key)?.onStrayResponse?.(response);
  }

  /** Hangs up an inbound call by its dialog key (BYE, or 480 while ringing); false when there is none. */
  hangUpCall(dialogKey: string, reason: string): boolean {
    const call = this.#calls.get(dialogKey);
    if (call === undefined || call.ended) return false;
    this.#hangUp(call, reason);
    return true;
  }

  #cancel(request: SipRequest, reply: (s: number) => void): void {
    const invite = this.#layer.inviteFor(request);
    const call = invite === undefined ? undefined : this.#byInvite.get(invite.key);
    if (invite === undefined) {
      reply(481);
      return;
    }
    reply(200);
    if (invite.finalStatus !== 0) return;
    invite.respond(responseTo(invite.request, 487, 'Request Terminated', { toTag: call?.dialog.localTag ?? newTag() }));
    if (call !== undefined) this.#end(call, 'the caller cancelled');
  }

  #inDialog(request: SipRequest, reply: (s: number) => void): void {
    const call = this.#calls.get(Dialog.keyOfRequest(request));
    if (call === undefined || call.ended) {
      reply(481);
      return;
    }
    if (request.method === 'BYE') {
      reply(200);
      if (call.invite.finalStatus === 0)
        call.invite.respond(
          responseTo(call.invite.request, 487, 'Request Terminated', { toTag: call.dialog.localTag }),
        );
      this.#end(call, 'the caller hung up');
      return;
    }
    const type = (header(request, 'content-type') ?? '').toLowerCase();
    if (request.method === 'MESSAGE' && type.startsWith('text/plain') && request.body.trim().length > 0) {
      call.handle?.text(request.body.trim().slice(0, 20_000));
      reply(200);
      return;
    }
    const signal = /Signal\s*=\s*([0-9*#A-D])/i.exec(request.body)?.[1];
    if (request.method === 'INFO' && type.startsWith('application/dtmf-relay') && signal !== undefined) {
      call.handle?.digit(signal.toUpperCase());
      reply(200);
      return;
    }
    reply(415);
  }

  /** The bridge ends the call: CANCEL-like 487 while ringing, BYE once answered. */
  #hangUp(call: Call, reason: string): void {
    if (call.ended) return;
    if (call.invite.finalStatus === 0) {
      call.invite.respond(
        responseTo(call.invite.request, 480, 'Temporarily Unavailable', { toTag: call.dialog.localTag }),
      );
    } else {
      const { dialog } = call;
      const transport = dialog.peer.protocol.toUpperCase();
      const bye = dialog.request(
        'BYE',
        { transport, host: this.#options.host, port: this.#options.port },
        this.contact(dialog.peer),
      );
      bye.headers.push(['reason', `Q.850;cause=16;text="${reason.replace(/"/g, "'")}"`]);
      this.#layer.request(bye, dialog.peer, (outcome) => {
        if ('timeout' in outcome) log.info({ callId: dialog.callId }, 'BYE not answered');
      });
    }
    this.#end(call, reason);
  }

  #end(call: Call, reason: string): void {
    if (call.ended) return;
    call.ended = true;
    this.#forget(call);
    call.transfer?.abandon(`the call ended: ${reason}`);
    call.handle?.end(reason);
  }

  #forget(call: Call): void {
    const timers = this.#layer.timers;
    if (call.ringTimer !== undefined) timers.clear(call.ringTimer);
    if (call.maxTimer !== undefined) timers.clear(call.maxTimer);
    this.#calls.delete(call.dialog.key);
    for (const [key, value] of this.#byInvite) if (value === call) this.#byInvite.delete(key);
  }

  contact(peer: SipPeer): string {
    const transport = peer.protocol === 'tcp' ? ';transport=tcp' : '';
    return `<sip:venus@${this.#options.host}:${this.#options.port}${transport}>`;
  }
}
