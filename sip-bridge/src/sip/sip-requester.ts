import type { SipRequest, SipResponse } from './message.ts';
import type { TimerHost } from './timers.ts';
import type { ClientOutcome, SipPeer } from './transactions.ts';

/** What the bridge's own requests (outbound INVITE, CANCEL, ACK, REFER, BYE) need of the user agent. */
export interface SipRequester {
  /** Our address as put in Via and Contact. */
  readonly host: string;
  readonly port: number;
  readonly timers: TimerHost;
  /** Sends `request` in a new client transaction (retransmissions, Timers B/F). */
  request(request: SipRequest, peer: SipPeer, onOutcome: (outcome: ClientOutcome) => void): void;
  /** Sends without a transaction (the ACK of a 2xx, RFC 3261 §13.2.2.4). */
  sendRaw(message: SipRequest, peer: SipPeer): void;
  contact(peer: SipPeer): string;
}

/** Handles the requests of one dialog the bridge holds outside the UA's own inbound calls (an outbound call). */
export interface DialogHandler {
  /** An in-dialog request; `reply` is undefined for an ACK. */
  onRequest(request: SipRequest, reply: ((status: number, extra?: ReplyExtra) => void) | undefined): void;
  /** A 2xx to our INVITE again: its ACK was lost. */
  onStrayResponse?(response: SipResponse): void;
}

export interface ReplyExtra {
  headers?: [string, string][];
  body?: string;
}
