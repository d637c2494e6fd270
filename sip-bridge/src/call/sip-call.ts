import { randomInt } from 'node:crypto';
import { createLogger, toVenusError, type WorkerLink } from '@venus/protocol';
import { CallSession } from '../../../edge/src/telephony/call-session.ts';
import { RtpLeg } from '../media/rtp-leg.ts';
import { answerSdp, type MediaOffer } from '../media/sdp.ts';
import type { CallContext, CallHandle, OpenCall } from '../sip/call-handle.ts';
import { sessionOpened } from './session-opened.ts';

const log = createLogger('sip.call');

export interface SipCallOptions {
  link: WorkerLink;
  /** Where RTP is bound and what the SDP answer advertises. */
  mediaAddress: string;
  /** How long the worker has to open the call's session before the INVITE is refused (default 10 s). */
  openTimeoutMs?: number;
}

/**
 * A SIP call's media and session: one RtpLeg (the caller's RTP) attached to the edge's telephony
 * call core (CallSession), which makes the call an ordinary session over the WorkerLink: caller
 * G.711 resampled to the model's 16 kHz, the assistant's voice paced out as 20 ms frames and
 * stopped at once when the runtime gives the caller the floor, DTMF as `user.dtmf`, and audio
 * counted as heard once sent as RTP (the caller's phone plays what it receives).
 *
 * The call is answered only once the worker has opened its session: a worker at capacity,
 * draining or unreachable makes the opener fail, and the INVITE gets 503 with Retry-After (which
 * a trunk can route elsewhere) instead of a 200 followed at once by the bridge's BYE.
 */
export function sipCallOpener(options: SipCallOptions): OpenCall {
  return async (context: CallContext): Promise<CallHandle> => {
    const { route, offer } = context;
    let session: CallSession | undefined;
    const leg = await RtpLeg.open({
      address: options.mediaAddress,
      onAudio: (frame) => session?.receiveAudio(frame),
      onDigit: (digit) => session?.receiveDtmf(digit),
    });
    leg.configure(offer);
    let answered = false;
    session = new CallSession({
      link: options.link,
      tenant: route.tenant,
      config: route.assistant,
      law: offer.law,
      media: {
        sendAudio: (frame, first) => leg.sendAudio(frame, first),
        // RTP has no far-end buffer to clear: the core already sends nothing more that was queued.
        // Logged with a wall-clock time (sub-ms) so the bench can time the runtime's decision to here.
        clear: () =>
          log.info(
            { callId: context.callId, session: session?.sessionId, at: performance.timeOrigin + performance.now() },
            'caller took the floor: assistant audio stopped',
          ),
        hangUp: (reason) => {
          leg.close();
          // Before the answer a refusal is the opener's failure (503), not a hang-up.
          if (answered) context.hangUp(reason);
        },
      },
    });
    session.start();
    const sessionId = session.sessionId;
    const opening = session;
    try {
      await sessionOpened(opening, options.openTimeoutMs);
    } catch (error) {
      leg.close();
      opening.hangUp('the call was refused');
      log.info({ callId: context.callId, session: sessionId, err: toVenusError(error) }, 'call refused');
      throw error;
    }
    answered = true;
    log.info(
      { callId: context.callId, session: sessionId, tenant: route.tenant, number: route.number },
      'call answered',
    );
    const sdpSession = randomInt(1, 2 ** 31);
    let version = 1;
    const answerFor = (o: MediaOffer) =>
      answerSdp(o, { address: options.mediaAddress, port: leg.port, sessionId: sdpSession, version: version++ });
    let textSeq = 0;
    return {
      sessionId,
      answer: answerFor(offer),
      reoffer: (next) => {
        leg.configure(next);
        return answerFor(next);
      },
      text: (text) => {
        textSeq += 1;
        options.link.send({ kind: 'text', session: sessionId, itemId: `item_sip_${sessionId}_${textSeq}`, text });
      },
      digit: (digit) => session?.receiveDtmf(digit),
      end: (reason) => {
        leg.close();
        session?.hangUp(reason);
        log.info({ callId: context.callId, session: sessionId, reason, rtp: leg.stats }, 'call ended');
      },
    };
  };
}
