import type { Dialog } from './dialog.ts';
import { header, type SipRequest } from './message.ts';
import type { SipRequester } from './sip-requester.ts';

export interface ReferTransferOptions {
  requester: SipRequester;
  dialog: Dialog;
  /** The SIP URI the far end is asked to call (a human's phone or desk). */
  referTo: string;
  /** Whom the REFER comes from (Referred-By). */
  referredBy: string;
  /** No final NOTIFY by then: the transfer is reported failed and the call stays (default 60 s). */
  timeoutMs?: number;
}

export type TransferOutcome = { transferred: true } | { transferred: false; status: number; reason: string };

/** The status line of a `message/sipfrag` body (RFC 3420), as a REFER's NOTIFY carries it. */
export function sipfragStatus(body: string): { status: number; reason: string } | undefined {
  const match = /^\s*SIP\/2\.0\s+(\d{3})\s*([^\r\n]*)/.exec(body);
  return match === null ? undefined : { status: Number(match[1]), reason: match[2]?.trim() ?? '' };
}

/**
 * A blind transfer (RFC 3515, RFC 5589 §6): REFER with Refer-To inside an established dialog,
 * then the far end's NOTIFYs (Event: refer, a sipfrag of its INVITE to the target) until a final
 * one. `outcome` resolves transferred on a 2xx sipfrag; on a REFER refused (4xx-6xx), a failure
 * sipfrag, a subscription ended without a final status, or no final NOTIFY in time, it resolves
 * with the status, and the call is the owner's to keep. Hanging up after success is the owner's.
 */
export class ReferTransfer {
  readonly outcome: Promise<TransferOutcome>;
  readonly #options: ReferTransferOptions;
  #settle!: (outcome: TransferOutcome) => void;
  #settled = false;
  #timer: unknown;

  constructor(options: ReferTransferOptions) {
    this.#options = options;
    this.outcome = new Promise((resolve) => {
      this.#settle = resolve;
    });
    const { requester, dialog } = options;
    const refer = dialog.request(
      'REFER',
      { transport: dialog.peer.protocol.toUpperCase(), host: requester.host, port: requester.port },
      requester.contact(dialog.peer),
    );
    refer.headers.push(['refer-to', `<${options.referTo}>`], ['referred-by', `<${options.referredBy}>`]);
    this.#timer = requester.timers.set(
      () => this.#finish({ transferred: false, status: 408, reason: 'no final NOTIFY from the far end' }),
      options.timeoutMs ?? 60_000,
    );
    requester.request(refer, dialog.peer, (outcome) => {
      if ('timeout' in outcome) {
        this.#finish({ transferred: false, status: 408, reason: 'the REFER was not answered' });
        return;
      }
      const { status, reason } = outcome.response;
      if (status >= 300) this.#finish({ transferred: false, status, reason: reason || 'REFER refused' });
    });
  }

  get settled(): boolean {
    return this.#settled;
  }

  /** A NOTIFY in the dialog: the status to answer it with (481 when it is no REFER's of ours). */
  notify(request: SipRequest): number {
    const event = (header(request, 'event') ?? '').trim().toLowerCase();
    if (!event.startsWith('refer')) return 489;
    const frag = sipfragStatus(request.body);
    const state = (header(request, 'subscription-state') ?? '').trim().toLowerCase();
    if (frag !== undefined && frag.status >= 200 && frag.status < 300) this.#finish({ transferred: true });
    else if (frag !== undefined && frag.status >= 300)
      this.#finish({ transferred: false, status: frag.status, reason: frag.reason || 'the target refused' });
    else if (state.startsWith('terminated'))
      this.#finish({ transferred: false, status: 487, reason: 'the far end ended the transfer without a result' });
    return 200;
  }

  /** The call ended while the transfer was under way. */
  abandon(reason: string): void {
    this.#finish({ transferred: false, status: 481, reason });
  }

  #finish(outcome: TransferOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#options.requester.timers.clear(this.#timer);
    this.#settle(outcome);
  }
}
