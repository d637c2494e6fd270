import type { MediaOffer } from '../media/sdp.ts';
import type { Route } from '../routing/routing-config.ts';

/** A call the UA has answered: media and session behind it (see sip-call.ts). */
export interface CallHandle {
  /** The runtime session the call is (what the control API names it by). */
  readonly sessionId: string;
  /** The SDP answer to the offer the call was opened with. */
  readonly answer: string;
  /** A re-INVITE's offer (hold, resume): the answer to it. */
  reoffer(offer: MediaOffer): string;
  text(text: string): void;
  digit(digit: string): void;
  /** The call is over on the SIP side (BYE, CANCEL, timeout): release media and session. */
  end(reason: string): void;
}

export interface CallContext {
  callId: string;
  /** The dialog's key in the UA (Call-ID and both tags): what a transfer of the call names. */
  dialogKey: string;
  route: Route;
  offer: MediaOffer;
  /** The runtime's side ended the call: the UA sends BYE. */
  hangUp(reason: string): void;
}

export type OpenCall = (context: CallContext) => Promise<CallHandle>;
