import { randomBytes } from 'node:crypto';
import { Dialog, newBranch, newTag } from './dialog.ts';
import { answerChallenge, type DigestCredentials } from './digest-client.ts';
import { cseq, header, type SipRequest, type SipResponse } from './message.ts';
import type { SipRequester } from './sip-requester.ts';
import type { SipPeer } from './transactions.ts';

export interface OutboundInviteOptions {
  requester: SipRequester;
  /** Request-URI and where to send it. */
  uri: string;
  peer: SipPeer;
  /** Our identity (a SIP URI) for From. */
  from: string;
  /** The SDP offer. */
  sdp: string;
  /** Answers a 401/407 challenge once, when given. */
  credentials?: DigestCredentials;
  /** No final answer by then: CANCEL, reported as 408. */
  ringTimeoutMs: number;
  /** Each provisional response (100, 180, 183). */
  onProvisional?(status: number): void;
}

export type InviteOutcome =
  | { answered: true; dialog: Dialog; response: SipResponse }
  | { answered: false; status: number; reason: string };

/**
 * The bridge's INVITE as UAC (RFC 3261 §13.2): sends the offer, follows provisionals, answers one
 * digest challenge (401/407) with a new CSeq, ACKs the 2xx itself (and again for a retransmitted
 * one), and CANCELs (§9.1) when the ring timeout passes or `cancel()` is called: at once if a
 * provisional came, else as soon as one does. A 2xx that races a CANCEL is ACKed and hung up with
 * BYE. Non-2xx finals are ACKed by the client transaction.
 */
export class OutboundInvite {
  readonly outcome: Promise<InviteOutcome>;
  readonly callId: string;
  readonly #options: OutboundInviteOptions;
  readonly #fromTag = newTag();
  #settle!: (outcome: InviteOutcome) => void;
  #settled = false;
  #current: SipRequest;
  #authTried = false;
  #provisional = false;
  #cancelWanted = false;
  #cancelSent = false;
  #ack: SipRequest | undefined;
  #ringTimer: unknown;

  constructor(options: OutboundInviteOptions) {
    this.#options = options;
    this.callId = `${randomBytes(10).toString('hex')}@${options.requester.host}`;
    this.outcome = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#current = this.#build(1, undefined);
    this.#send();
    this.#ringTimer = options.requester.timers.set(() => this.cancel(408, 'no answer'), options.ringTimeoutMs);
  }

  /** Gives up on the call (the caller went away, or the ring timeout): CANCEL, outcome `status`. */
  cancel(status = 487, reason = 'cancelled'): void {
    this.#finish({ answered: false, status, reason });
    this.#cancelWanted = true;
    if (this.#provisional) this.#sendCancel();
  }

  /** A 2xx came again: our ACK was lost. */
  reAck(): void {
    if (this.#ack !== undefined) this.#options.requester.sendRaw(this.#ack, this.#options.peer);
  }

  #send(): void {
    const { requester, peer } = this.#options;
    const request = this.#current;
    requester.request(request, peer, (outcome) => {
      if (request !== this.#current) return;
      if ('timeout' in outcome) {
        this.#finish({ answered: false, status: 408, reason: 'no response (timeout)' });
        return;
      }
      this.#response(outcome.response);
    });
  }

  #response(response: SipResponse): void {
    const { status } = response;
    if (status < 200) {
      this.#provisional = true;
      if (this.#cancelWanted) this.#sendCancel();
      else this.#options.onProvisional?.(status);
      return;
    }
    if (status < 300) {
      const dialog = Dialog.asCaller(this.#current, response, this.#options.peer);
      this.#ack = this.#ackFor(dialog);
      this.reAck();
      if (this.#settled) {
        // Answered after we gave up: end it at once (§9.1 allows the race).
        this.#bye(dialog);
        return;
      }
      this.#finish({ answered: true, dialog, response });
      return;
    }
    const challenge =
      status === 401
        ? header(response, 'www-authenticate')
        : status === 407
          ? header(response, 'proxy-authenticate')
          : undefined;
    const { credentials } = this.#options;
    if (challenge !== undefined && credentials !== undefined && !this.#authTried && !this.#settled) {
      const answer = answerChallenge(challenge, { method: 'INVITE', uri: this.#current.uri }, credentials);
      if (answer !== undefined) {
        this.#authTried = true;
        this.#provisional = false;
        const seq = (cseq(this.#current)?.seq ?? 1) + 1;
        this.#current = this.#build(seq, [status === 401 ? 'authorization' : 'proxy-authorization', answer]);
        this.#send();
        return;
      }
    }
    this.#finish({ answered: false, status, reason: response.reason || 'refused' });
  }

  #finish(outcome: InviteOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#options.requester.timers.clear(this.#ringTimer);
    this.#settle(outcome);
  }

  #build(seq: number, auth: [string, string] | undefined): SipRequest {
    const { requester, uri, from, sdp, peer } = this.#options;
    const headers: [string, string][] = [
      ['via', `SIP/2.0/${peer.protocol.toUpperCase()} ${requester.host}:${requester.port};branch=${newBranch()};rport`],
      ['max-forwards', '70'],
      ['from', `<${from}>;tag=${this.#fromTag}`],
      ['to', `<${uri}>`],
      ['call-id', this.callId],
      ['cseq', `${seq} INVITE`],
      ['contact', requester.contact(peer)],
      ['allow', 'INVITE, ACK, CANCEL, BYE, OPTIONS, MESSAGE, INFO, NOTIFY'],
      ['content-type', 'application/sdp'],
    ];
    if (auth !== undefined) headers.push(auth);
    return { kind: 'request', method: 'INVITE', uri, headers, body: sdp };
  }

  #sendCancel(): void {
    if (this.#cancelSent) return;
    this.#cancelSent = true;
    const invite = this.#current;
    const seq = cseq(invite)?.seq ?? 1;
    const keep = new Set(['via', 'from', 'to', 'call-id', 'max-forwards']);
    const cancel: SipRequest = {
      kind: 'request',
      method: 'CANCEL',
      uri: invite.uri,
      headers: [...invite.headers.filter(([name]) => keep.has(name)), ['cseq', `${seq} CANCEL`]],
      body: '',
    };
    this.#options.requester.request(cancel, this.#options.peer, () => {});
  }

  #ackFor(dialog: Dialog): SipRequest {
    const { requester, peer } = this.#options;
    return {
      kind: 'request',
      method: 'ACK',
      uri: dialog.remoteTarget,
      headers: [
        [
          'via',
          `SIP/2.0/${peer.protocol.toUpperCase()} ${requester.host}:${requester.port};branch=${newBranch()};rport`,
        ],
        ['max-forwards', '70'],
        ['from', dialog.local],
        ['to', dialog.remote],
        ['call-id', dialog.callId],
        ['cseq', `${dialog.localCseq} ACK`],
      ],
      body: '',
    };
  }

  #bye(dialog: Dialog): void {
    const { requester, peer } = this.#options;
    const bye = dialog.request(
      'BYE',
      { transport: peer.protocol.toUpperCase(), host: requester.host, port: requester.port },
      requester.contact(peer),
    );
    requester.request(bye, peer, () => {});
  }
}
