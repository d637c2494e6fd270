// Regression: the bridge answered every INVITE (200) as soon as it had asked the worker for a
// session, so a worker at capacity turned the call into a 200 followed at once by the bridge's BYE
// (the telephony bench's 61 failed calls were all this: "the reference model is at capacity").
// The opener now waits for the worker to open the session, and fails when it refuses.
import { SessionConfigSchema, VenusError } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { FakeWorkerLink } from '../../../edge/src/testing/fake-worker-link.ts';
import { readOffer } from '../media/sdp.ts';
import type { CallContext } from '../sip/call-handle.ts';
import { sipCallOpener } from './sip-call.ts';

const offer = readOffer(
  'v=0\r\no=u 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n',
);

function context(hungUp: string[]): CallContext {
  if ('error' in offer) throw new Error(offer.error);
  return {
    callId: 'call-1',
    dialogKey: 'call-1;uac;uas',
    offer,
    route: {
      tenant: 'acme',
      number: '100',
      trunk: undefined,
      ringMs: 0,
      maxCallMs: undefined,
      assistant: SessionConfigSchema.parse({}),
    },
    hangUp: (reason) => hungUp.push(reason),
  };
}

describe('sipCallOpener', () => {
  it('answers only once the worker has opened the session', async () => {
    const link = new FakeWorkerLink();
    const hungUp: string[] = [];
    let settled = false;
    const opening = sipCallOpener({ link, mediaAddress: '127.0.0.1' })(context(hungUp)).finally(() => {
      settled = true;
    });
    const open = await link.sent('open');
    await Promise.resolve();
    expect(settled).toBe(false);
    link.pushTimeline(open.session, {
      stream: 'system',
      type: 'session.config',
      data: { config: open.config, tenant: 'acme' },
    });
    const handle = await opening;
    expect(handle.answer).toContain('m=audio');
    handle.end('the caller hung up');
    expect(link.framesOf('close').map((f) => f.session)).toEqual([open.session]);
    expect(hungUp).toEqual([]);
  });

  it('fails with the worker’s reason when the worker refuses the session, and hangs nothing up', async () => {
    const link = new FakeWorkerLink();
    const hungUp: string[] = [];
    const opening = sipCallOpener({ link, mediaAddress: '127.0.0.1' })(context(hungUp));
    const open = await link.sent('open');
    link.push({
      kind: 'error',
      session: open.session,
      code: 'model_unavailable',
      message: 'could not open session: the reference model is at capacity (52 sessions)',
    });
    link.push({ kind: 'closed', session: open.session, reason: 'model_unavailable' });
    const error = await opening.catch((e: unknown) => e);
    expect(VenusError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'model_unavailable', message: expect.stringContaining('at capacity') });
    // The UA answers the INVITE 503; the opener must not also ask it to hang up (480/BYE).
    expect(hungUp).toEqual([]);
  });

  it('fails when the worker does not open the session in time, and closes it', async () => {
    const link = new FakeWorkerLink();
    const error = await sipCallOpener({ link, mediaAddress: '127.0.0.1', openTimeoutMs: 1 })(context([])).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'model_unavailable' });
    expect(link.framesOf('close').length).toBe(1);
  });
});
