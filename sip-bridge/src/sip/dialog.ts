import { randomBytes } from 'node:crypto';
import { header, type SipRequest, type SipResponse, tagOf } from './message.ts';
import type { SipPeer } from './transactions.ts';

export const newTag = () => randomBytes(6).toString('hex');
export const newBranch = () => `z9hG4bK${randomBytes(8).toString('hex')}`;

/** The Request-URI of a Contact value (`<sip:...>` or bare), or undefined. */
export function contactUri(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return (/<([^>]+)>/.exec(value)?.[1] ?? value.split(';')[0])?.trim() || undefined;
}

/**
 * One dialog as the UAS of an INVITE (RFC 3261 §12): identified by Call-ID and both tags, it
 * remembers the caller's target and the CSeq numbers both ways, and builds the bridge's own
 * in-dialog requests (BYE).
 */
export class Dialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** Our side as the caller addressed it (their To, with our tag). */
  readonly local: string;
  /** The caller (their From). */
  readonly remote: string;
  remoteTarget: string;
  remoteCseq: number;
  localCseq = 1;
  readonly peer: SipPeer;

  constructor(invite: SipRequest, localTag: string, peer: SipPeer, remoteCseq: number) {
    this.callId = header(invite, 'call-id') ?? '';
    this.localTag = localTag;
    this.remoteTag = tagOf(header(invite, 'from')) ?? '';
    const to = header(invite, 'to') ?? '';
    this.local = tagOf(to) === undefined ? `${to};tag=${localTag}` : to;
    this.remote = header(invite, 'from') ?? '';
    this.remoteTarget = contactUri(header(invite, 'contact')) ?? invite.uri;
    this.remoteCseq = remoteCseq;
    this.peer = peer;
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
