// Regression: the bridge answered each INVITE (200) as soon as it had asked the worker for a
// session, so when the worker was full the caller got a 200 and then, at once, the bridge's BYE
// (SIPp: "Aborting call on an unexpected BYE"). The telephony bench's 61 failed calls of 200 were
// all this ("the reference model is at capacity"). A worker that refuses the session now makes the
// INVITE a 503 with Retry-After, which a trunk can route elsewhere, and no call is answered.
import { createSocket } from 'node:dgram';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BridgeUnderTest } from './support/sip-bridge-process.ts';
import { SipUac } from './support/sip-uac.ts';
import { runSipp, SIPP_SCENARIOS } from './support/sipp.ts';

let bridge: BridgeUnderTest;

beforeAll(async () => {
  // A worker with room for one session.
  bridge = await BridgeUnderTest.start(
    { routes: [{ number: '*', tenant: 'default' }] },
    {},
    { modelEnv: { VENUS_MAX_SESSIONS: '1' } },
  );
});

afterAll(async () => {
  await bridge?.close();
});

it('an INVITE the worker has no room for gets 503 with Retry-After, not a 200 and a BYE', async () => {
  const sip = createSocket('udp4');
  const rtp = createSocket('udp4');
  await new Promise<void>((r) => sip.bind(0, '127.0.0.1', r));
  await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', r));
  try {
    const first = new SipUac(sip, bridge.target, `first-${Date.now()}`);
    await first.invite('first', rtp.address().port);
    const run = await runSipp(
      bridge.target,
      ['-sf', path.join(SIPP_SCENARIOS, 'worker-full.xml'), '-s', 'second'],
      bridge.dir,
    );
    expect(run.code, run.output).toBe(0);
    expect(bridge.sessionsFor('second')).toEqual([]);
    expect(bridge.output).toContain('"call refused"');
    expect(await first.bye()).toBe(200);
  } finally {
    sip.close();
    rtp.close();
  }
});
