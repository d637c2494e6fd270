import path from 'node:path';
import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCallNumber } from '../harness-functions/src/builtins/call-number.ts';
import { createTransferCall } from '../harness-functions/src/builtins/transfer-call.ts';
import type { FunctionContext } from '../harness-functions/src/function-definition.ts';
import { BridgeUnderTest } from './support/sip-bridge-process.ts';
import { runSipp, SIPP_SCENARIOS } from './support/sipp.ts';
import { freeUdpPort, startSippUas } from './support/sipp-uas.ts';
import { until } from './support/until.ts';

/**
 * Outbound calls (the bridge as UAC) and REFER transfers through the bridge's control API, with
 * SIPp as the far end and real sessions behind the bridge process; and the harness's call_number
 * and transfer_call functions calling that API.
 */
const TOKEN = 'test-control-token';
const HUMAN = 'sip:human@127.0.0.1:5999';

let bridge: BridgeUnderTest;
let api: string;
let gatewayPort: number;

beforeAll(async () => {
  gatewayPort = await freeUdpPort();
  const routes = {
    routes: ['refer-ok', 'refer-no', 'refer-busy', 'fn-transfer'].map((number) => ({ number, tenant: 'default' })),
    outbound: {
      gateway: `sip:127.0.0.1:${gatewayPort}`,
      codec: 'pcma',
      allow: ['^sip:', '^\\+?[0-9]+$'],
      transferTo: HUMAN,
    },
  };
  bridge = await BridgeUnderTest.start(routes, {
    VENUS_SIP_CONTROL_PORT: '0',
    VENUS_SIP_CONTROL_TOKEN: TOKEN,
  });
  api = /sip control api ready: (\S+)/.exec(bridge.output)![1]!;
});

afterAll(async () => {
  await bridge?.close();
});

/** What the control API answers, loosely: each test reads the fields its route gives. */
interface ControlBody {
  session: string;
  calls: unknown[];
  error: { code: string; message: string; sipStatus?: number };
}

async function control(method: string, route: string, body?: unknown, token = TOKEN) {
  const response = await fetch(`${api}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as ControlBody };
}

const scenario = (name: string) => path.join(SIPP_SCENARIOS, name);
const types = (events: TimelineEvent[]) => events.map((e) => e.type);

/** An inbound SIPp call to `number`, running, and its session once the bridge has answered it. */
async function inboundCall(number: string, file: string) {
  const run = runSipp(bridge.target, ['-sf', scenario(file), '-s', number], bridge.dir);
  let session: string | undefined;
  await until(
    `the bridge answers ${number}`,
    () => {
      session = bridge.sessionsFor(number)[0];
      return session !== undefined;
    },
    90_000,
  );
  return { run, session: session! };
}

describe('SIP bridge control API: outbound calls and transfers', () => {
  it('refuses requests without the token, and bodies that do not validate', async () => {
    expect((await control('GET', '/v1/calls', undefined, 'wrong')).body.error.code).toBe('unauthorized');
    const bad = await control('POST', '/v1/calls', { to: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_arguments');
    const denied = await control('POST', '/v1/calls', { to: 'alice@example.com' });
    expect(denied.body.error.code).toBe('forbidden');
  });

  it('places a call: SIPp answers, its RTP (speech and DTMF 1) reaches the session, the bridge hangs up with BYE', async () => {
    const port = await freeUdpPort();
    const far = startSippUas(scenario('uas-answer.xml'), port, bridge.dir);
    const placed = await control('POST', '/v1/calls', { to: `sip:alice@127.0.0.1:${port}` });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    const session = placed.body.session;
    await bridge.waitTimeline(session, 'the far end pressed 1', (events) =>
      events.some((e) => e.type === 'user.dtmf' && e.data.digit === '1'),
    );
    expect((await control('GET', '/v1/calls')).body.calls).toContainEqual(
      expect.objectContaining({ session, direction: 'outbound' }),
    );
    expect((await control('DELETE', `/v1/calls/${session}`)).status).toBe(200);
    const run = await far.exited;
    expect(run.code, run.output).toBe(0);
    const events = await bridge.closedTimeline(session);
    expect(types(events)).toContain('user.audio');
  });

  it('a busy far end (486) is reported as call_failed with sipStatus 486, and no call is held', async () => {
    const port = await freeUdpPort();
    const far = startSippUas(scenario('uas-busy.xml'), port, bridge.dir);
    const placed = await control('POST', '/v1/calls', { to: `sip:bob@127.0.0.1:${port}` });
    expect(placed.status).toBe(409);
    expect(placed.body.error).toMatchObject({ code: 'call_failed', sipStatus: 486 });
    const run = await far.exited;
    expect(run.code, run.output).toBe(0);
    expect((await control('GET', '/v1/calls')).body.calls).toEqual([]);
  });

  it('transfers an inbound call by REFER: 202, NOTIFY 200, then the bridge hangs up its leg', async () => {
    const { run, session } = await inboundCall('refer-ok', 'refer-accept.xml');
    const transfer = await control('POST', `/v1/calls/${session}/transfer`, { to: HUMAN });
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(200);
    expect(transfer.body).toEqual({ session, transferred: true });
    const sipp = await run;
    expect(sipp.code, sipp.output).toBe(0);
    await bridge.closedTimeline(session);
  });

  it('a refused REFER (603) is reported as transfer_failed and the call stays with the assistant', async () => {
    const { run, session } = await inboundCall('refer-no', 'refer-reject.xml');
    const transfer = await control('POST', `/v1/calls/${session}/transfer`, {});
    expect(transfer.body.error).toMatchObject({ code: 'transfer_failed', sipStatus: 603 });
    expect(types(await bridge.timeline(session))).not.toContain('session.closed');
    // The call is still up: the bridge can still hang it up in its dialog (SIPp waits for that BYE).
    expect((await control('DELETE', `/v1/calls/${session}`)).status).toBe(200);
    const sipp = await run;
    expect(sipp.code, sipp.output).toBe(0);
  });

  it('a target that turns out busy (NOTIFY sipfrag 486) is reported as transfer_failed; the call stays', async () => {
    const { run, session } = await inboundCall('refer-busy', 'refer-notify-busy.xml');
    const transfer = await control('POST', `/v1/calls/${session}/transfer`, {});
    expect(transfer.body.error).toMatchObject({ code: 'transfer_failed', sipStatus: 486 });
    expect((await control('DELETE', `/v1/calls/${session}`)).status).toBe(200);
    const sipp = await run;
    expect(sipp.code, sipp.output).toBe(0);
  });

  it('the harness functions call_number (a number through the gateway) and transfer_call work against the bridge', async () => {
    const options = { url: api, token: TOKEN };
    const ctx = (session: string): FunctionContext => ({
      signal: new AbortController().signal,
      progress: () => {},
      session,
      workId: 'work_test',
    });
    const callNumber = createCallNumber(options);
    const args = callNumber.extract('please call +1 555 0100');
    expect(args).toEqual({ to: '+15550100' });
    const far = startSippUas(scenario('uas-quiet.xml'), gatewayPort, bridge.dir);
    const called = await callNumber.run(args!, ctx('sess_unused'));
    expect(called.data).toMatchObject({ to: '+15550100', answered: true });
    const placed = (called.data as { session: string }).session;
    expect((await control('DELETE', `/v1/calls/${placed}`)).status).toBe(200);
    expect((await far.exited).code).toBe(0);

    const transferCall = createTransferCall(options);
    expect(transferCall.extract('can I speak to a human please')).toEqual({});
    const { run, session } = await inboundCall('fn-transfer', 'refer-accept.xml');
    const transferred = await transferCall.run({}, ctx(session));
    expect(transferred.data).toMatchObject({ session, transferred: true });
    expect((await run).code).toBe(0);
    await expect(transferCall.run({}, ctx('sess_gone'))).rejects.toMatchObject({ code: 'not_found' });
  });
});
