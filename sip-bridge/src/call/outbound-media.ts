import { randomInt } from 'node:crypto';
import { createLogger, type SessionConfig, toVenusError, type WorkerLink } from '@venus/protocol';
import { CallSession } from '../../../edge/src/telephony/call-session.ts';
import { RtpLeg } from '../media/rtp-leg.ts';
import { answerSdp, type Law, type MediaOffer } from '../media/sdp.ts';
import { offerSdp } from '../media/sdp-offer.ts';
import { sessionOpened } from './session-opened.ts';

const log = createLogger('sip.outbound');

export interface OutboundMediaOptions {
  link: WorkerLink;
  mediaAddress: string;
  tenant: string;
  config: SessionConfig;
  law: Law;
  /** How long the worker has to open the session before the call is not placed (default 10 s). */
  openTimeoutMs?: number;
  /** The runtime's side ended the call (its session closed). */
  onHangUp(reason: string): void;
}

/**
 * An outbound call's media and session, made before anything is dialled: an RtpLeg bound for the
 * SDP offer and the edge's call core (CallSession) with its worker session already open, so a
 * worker that is full or draining means no call is placed, rather than a phone that rings, is
 * answered, and hears the bridge hang up. The far end's SDP answer `connect`s the leg.
 *
 * The same composition as the inbound opener (sip-call.ts), which takes the caller's offer up
 * front and so cannot serve a call where the bridge makes the offer.
 */
export class OutboundMedia {
  readonly sessionId: string;
  readonly offer: string;
  readonly #leg: RtpLeg;
  readonly #session: CallSession;
  readonly #link: WorkerLink;
  readonly #address: string;
  readonly #sdpSession = randomInt(1, 2 ** 31);
  #sdpVersion = 2;
  #textSeq = 0;
  #ended = false;

  private constructor(leg: RtpLeg, session: CallSession, link: WorkerLink, address: string, offer: string) {
    this.#leg = leg;
    this.#address = address;
    this.#session = session;
    this.#link = link;
    this.sessionId = session.sessionId;
    this.offer = offer;
  }

  static async open(options: OutboundMediaOptions): Promise<OutboundMedia> {
    let session: CallSession | undefined;
    const leg = await RtpLeg.open({
      address: options.mediaAddress,
      onAudio: (frame) => session?.receiveAudio(frame),
      onDigit: (digit) => session?.receiveDtmf(digit),
    });
    let opened = false;
    session = new CallSession({
      link: options.link,
      tenant: options.tenant,
      config: options.config,
      law: options.law,
      media: {
        sendAudio: (frame, first) => leg.sendAudio(frame, first),
        clear: () => {},
        hangUp: (reason) => {
          leg.close();
          if (opened) options.onHangUp(reason);
        },
      },
    });
    session.start();
    const opening = session;
    try {
      await sessionOpened(opening, options.openTimeoutMs);
    } catch (error) {
      leg.close();
      opening.hangUp('the call was not placed');
      throw toVenusError(error, 'model_unavailable');
    }
    opened = true;
    const offer = offerSdp({
      address: options.mediaAddress,
      port: leg.port,
      law: options.law,
      sessionId: randomInt(1, 2 ** 31),
    });
    return new OutboundMedia(leg, opening, options.link, options.mediaAddress, offer);
  }

  get rtp() {
    return this.#leg.stats;
  }

  /** The far end's SDP (its answer, or a later re-INVITE's offer): where RTP goes from now on. */
  connect(remote: MediaOffer): void {
    this.#leg.configure(remote);
  }

  /** The answer to a re-INVITE's offer (hold, resume, session refresh). */
  reanswer(offer: MediaOffer): string {
    this.#leg.configure(offer);
    return answerSdp(offer, {
      address: this.#address,
      port: this.#leg.port,
      sessionId: this.#sdpSession,
      version: this.#sdpVersion++,
    });
  }

  text(text: string): void {
    this.#textSeq += 1;
    this.#link.send({
      kind: 'text',
      session: this.sessionId,
      itemId: `item_sip_${this.sessionId}_${this.#textSeq}`,
      text,
    });
  }

  digit(digit: string): void {
    this.#session.receiveDtmf(digit);
  }

  /** The call is over on the SIP side (or never connected): release media and session. */
  end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#leg.close();
    this.#session.hangUp(reason);
    log.info({ session: this.sessionId, reason, rtp: this.#leg.stats }, 'outbound call ended');
  }
}
