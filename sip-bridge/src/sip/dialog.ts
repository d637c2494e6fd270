import { randomBytes } from 'node:crypto';
import { cseq, header, type SipRequest, type SipResponse, tagOf } from './message.ts';
import type { SipPeer } from './transactions.ts';

export const newTag = () => randomBytes(6).toString('hex');
export const newBranch = () => `z9hG4bK${randomBytes(8).toString('hex')}`;

/** The Request-URI of a Contact value (`<sip:...>` or bare), or undefined. */
export function contactUri(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return (/<([^>]+)>/.exec(value)?.[1] ?? value.split(';')[0])?.trim() || undefined;
}

/** What identifies a dialog and where its requests go (RFC 3261 §12). */
export interface DialogParts {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** Our side with our tag: the From of our requests. */
  local: string;
  /** The other side with its tag: the To of our requests. */
  remote: string;
  remoteTarget: string;
  remoteCseq: number;
  localCseq: number;
  peer: SipPeer;
}

/**
 * One dialog (RFC 3261 §12), as the UAS of an INVITE (`new Dialog(invite, ...)`) or as its UAC
 * (`Dialog.asCaller`): identified by Call-ID and both tags, it remembers the other side's target
 * and the CSeq numbers both ways, and builds the bridge's own in-dialog requests (BYE, REFER).
 * Route sets (Record-Route) are not kept: requests go straight to the peer the dialog came from.
 */
export class Dialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** Our side as the caller addressed it (their To, with our tag), or our From when we called. */
  readonly local: string;
  /** The caller (their From), or the callee (their To, with their tag) when we called. */
  readonly remote: string;
  remoteTarget: string;
  remoteCseq: number;
  localCseq = 1;
  readonly peer: SipPeer;

  constructor(invite: SipRequest, localTag: string, peer: SipPeer, remoteCseq: number);
  constructor(parts: DialogParts);
  constructor(invite: SipRequest | DialogParts, localTag?: string, peer?: SipPeer, remoteCseq?: number) {
    if (!('kind' in invite)) {
      this.callId = invite.callId;
      this.localTag = invite.localTag;
      this.remoteTag = invite.remoteTag;
      this.local = invite.local;
      this.remote = invite.remote;
      this.remoteTarget = invite.remoteTarget;
      this.remoteCseq = invite.remoteCseq;
      this.localCseq = invite.localCseq;
      this.peer = invite.peer;
      return;
    }
    this.callId = header(invite, 'call-id') ?? '';
    this.localTag = localTag ?? '';
    this.remoteTag = tagOf(header(invite, 'from')) ?? '';
    const to = header(invite, 'to') ?? '';
    this.local = tagOf(to) === undefined ? `${to};tag=${localTag}` : to;
    this.remote = header(invite, 'from') ?? '';
    this.remoteTarget = contactUri(header(invite, 'contact')) ?? invite.uri;
    this.remoteCseq = remoteCseq ?? 0;
    this.peer = peer!;
  }

  /** The dialog our INVITE created with its 2xx (RFC 3261 §12.1.2). */
  static asCaller(invite: SipRequest, answer: SipResponse, peer: SipPeer): Dialog {
    const to = header(answer, 'to') ?? '';
    return new Dialog({
      callId: header(invite, 'call-id') ?? '',
      localTag: tagOf(header(invite, 'from')) ?? '',
      remoteTag: tagOf(to) ?? '',
      local: header(invite, 'from') ?? '',
      remote: to,
      remoteTarget: contactUri(header(answer, 'contact')) ?? invite.uri,
      remoteCseq: 0,
      localCseq: cseq(invite)?.seq ?? 1,
      peer,
    });
  }

  get key(): string {
    return Dialog.keyOf(this.callId, this.localTag, this.remoteTag);
  }

  static keyOf(callId: string, localTag: string, remoteTag: string): string {
    return `${callId}|${localTag}|${remoteTag}`;
  }

  /** The key of the dialog an in-dialog request belongs to (our tag is in its To). */
  static keyOfRequest(request: SipRequest): string {
    return Dialog.keyOf(
      header(request, 'call-id') ?? '',
      tagOf(header(request, 'to')) ?? '',
      tagOf(header(request, 'from')) ?? '',
    );
  }

  /** A request of ours inside the dialog (RFC 3261 §12.2.1.1). */
  request(method: string, via: { transport: string; host: string; port: number }, contact: string): SipRequest {
    this.localCseq += 1;
    return {
      kind: 'request',
      method,
      uri: this.remoteTarget,
      headers: [
        ['via', `SIP/2.0/${via.transport} ${via.host}:${via.port};branch=${newBranch()};rport`],
        ['max-forwards', '70'],
        ['from', this.local],
        ['to', this.remote],
        ['call-id', this.callId],
        ['cseq', `${this.localCseq} ${method}`],
        ['contact', contact],
      ],
      body: '',
    };
  }
}

export type { SipResponse };
