import { execFileSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { statSync } from 'node:fs';
import path from 'node:path';
import type { TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulawToLinear } from '../edge/src/audio/g711.ts';
import { BridgeUnderTest } from './support/sip-bridge-process.ts';
import { runSipp, SIPP_SCENARIOS } from './support/sipp.ts';
import { until } from './support/until.ts';

/**
 * The SIP bridge as its own process (`sip-bridge/src/sip-main.ts`) against real SIPp calls, with
 * real sessions behind it: the embedded runtime's session host (reference model) served over the
 * relay, as a GPU worker serves edges.
 */
const WAIT_MS = 90_000;
const REQUEST = "What's the weather in Paris?";

let bridge: BridgeUnderTest;

const routes = {
  trunks: [{ name: 'carrier', username: 'trunk', password: 's3cret' }],
  routes: [
    { number: 'auth', tenant: 'default', trunk: 'carrier' },
    { number: 'ring', tenant: 'default', ringMs: 120_000 },
    { number: 'bye', tenant: 'default', maxCallMs: 1500 },
    ...['plain', 'tcp', 'speech', 'dtmf', 'hold', 'bad'].map((number) => ({ number, tenant: 'default' })),
  ],
};

beforeAll(async () => {
  bridge = await BridgeUnderTest.start(routes);
});

afterAll(async () => {
  await bridge?.close();
});

const sessionsFor = (number: string) => bridge.sessionsFor(number);
const timeline = (session: string) => bridge.timeline(session);
const closedTimeline = (session: string) => bridge.closedTimeline(session);

async function sipp(args: string[]): Promise<void> {
  const run = await runSipp(bridge.target, args, bridge.dir);
  expect(run.code, run.output).toBe(0);
}

/** What the bridge sent as RTP to a capture port: packets and their decoded 20 ms frames. */
class RtpCapture {
  readonly packets: { seq: number; timestamp: number; marker: boolean; rms: number }[] = [];
  readonly #socket: Socket = createSocket('udp4');

  async open(): Promise<number> {
    this.#socket.on('message', (bytes) => {
      if (bytes.length < 12 || bytes[0]! >> 6 !== 2) return;
      const payload = bytes.subarray(12);
      let sum = 0;
      for (const code of payload) sum += mulawToLinear(code) ** 2;
      this.packets.push({
        seq: bytes.readUInt16BE(2),
        timestamp: bytes.readUInt32BE(4),
        marker: (bytes[1]! & 0x80) !== 0,
        rms: Math.sqrt(sum / Math.max(1, payload.length)),
      });
    });
    await new Promise<void>((r) => this.#socket.bind(0, '127.0.0.1', r));
    return this.#socket.address().port;
  }

  close(): void {
    this.#socket.close();
  }
}

describe('SIP bridge against SIPp', () => {
  it('a plain call over UDP opens a session for the route and closes it on BYE', async () => {
    await sipp(['-sn', 'uac', '-s', 'plain']);
    const [session] = sessionsFor('plain');
    expect(session).toBeDefined();
    const events = await closedTimeline(session!);
    expect(events.find((e) => e.type === 'session.config')).toMatchObject({ data: { tenant: 'default' } });
  });

  it('a plain call over TCP', async () => {
    await sipp(['-sn', 'uac', '-s', 'tcp', '-t', 't1']);
    expect(sessionsFor('tcp')).toHaveLength(1);
    await closedTimeline(sessionsFor('tcp')[0]!);
  });

  it('a spoken request over RTP reaches the session; the reply comes back as paced RTP speech; the runtime ends the call with a BYE', {
    timeout: 240_000,
  }, async () => {
    // The scenario streams request.ulaw from its working directory (SIPp does not expand keys in exec).
    const speech = path.join(bridge.dir, 'request.ulaw');
    execFileSync('espeak-ng', ['-v', 'en-us', '-w', path.join(bridge.dir, 'request.wav'), REQUEST]);
    execFileSync('sox', [
      path.join(bridge.dir, 'request.wav'),
      '-r',
      '8000',
      '-c',
      '1',
      '-t',
      'ul',
      speech,
      'pad',
      '0',
      '1',
    ]);
    const speechMs = Math.round(statSync(speech).size / 8);
    const capture = new RtpCapture();
    const capturePort = await capture.open();
    try {
      const call = runSipp(
        bridge.target,
        [
          '-sf',
          path.join(SIPP_SCENARIOS, 'speech.xml'),
          '-s',
          'speech',
          ...keys({ capture_port: capturePort, request_text: REQUEST }),
        ],
        bridge.dir,
      );
      await until('the call is answered', () => sessionsFor('speech').length === 1, WAIT_MS);
      const session = sessionsFor('speech')[0]!;
      let events: TimelineEvent[] = [];
      const refresh = async () => {
        events = await timeline(session);
      };
      // The caller's speech arrives as user audio and voice activity (the reference model has no
      // recogniser: the same request also arrives as text, which it answers).
      await until(
        'speech started and stopped',
        () => speechEvents(events).join().includes('started,stopped'),
        WAIT_MS,
        refresh,
      ).catch((error: unknown) => {
        throw new Error(`${error}; timeline: ${summary(events)}; bridge: ${bridge.output.slice(-1500)}`);
      });
      await until(
        'an answer finished',
        () => events.some((e) => e.type === 'assistant.utterance' && e.data.phase === 'finished'),
        WAIT_MS,
        refresh,
      );
      const first = events.find((e) => e.type === 'assistant.utterance')!;
      const utteranceId = first.type === 'assistant.utterance' ? first.data.utteranceId : '';
      const spokenMs = events.reduce(
        (ms, e) => ms + (e.type === 'assistant.audio' && e.data.utteranceId === utteranceId ? e.data.durationMs : 0),
        0,
      );
      // RTP goes out at the pace it plays: wait for the packets of the whole answer.
      await until('the answer arrived as RTP', () => capture.packets.length * 20 >= spokenMs - 100, WAIT_MS);
      await bridge.runtime.host.session(session)!.close('the test is over');
      const run = await call;
      expect(run.code, run.output).toBe(0);

      const userAudioMs = events.reduce((ms, e) => ms + (e.type === 'user.audio' ? e.data.durationMs : 0), 0);
      expect(userAudioMs).toBeGreaterThanOrEqual(speechMs * 0.9);
      expect(events.some((e) => e.type === 'user.text' && e.data.text === REQUEST)).toBe(true);
      expect(spokenMs).toBeGreaterThan(300);
      // What came back is speech of plausible length, not silence: loud frames for much of the answer.
      const voicedMs = capture.packets.filter((p) => p.rms > 300).length * 20;
      expect(voicedMs).toBeGreaterThan(Math.min(500, spokenMs * 0.3));
      expect(capture.packets.length * 20).toBeLessThanOrEqual(
        events.reduce((ms, e) => ms + (e.type === 'assistant.audio' ? e.data.durationMs + 20 : 0), 0),
      );
      // One RTP stream: consecutive sequence numbers, 160 samples a packet, marker on the first.
      const [p0, p1] = capture.packets;
      expect(p0!.marker).toBe(true);
      expect((p1!.seq - p0!.seq) & 0xffff).toBe(1);
      expect((p1!.timestamp - p0!.timestamp) >>> 0).toBe(160);
      // Audio sent as RTP counts as heard.
      const acks = (await timeline(session)).filter((e) => e.type === 'playback.ack' && e.data.source === 'client');
      expect(acks.length).toBeGreaterThan(0);
      console.log(
        `SIP speech call: ${speechMs} ms request (${userAudioMs} ms user audio on the timeline); answer ${spokenMs} ms, ` +
          `${capture.packets.length} RTP packets back, ${voicedMs} ms voiced`,
      );
    } finally {
      capture.close();
    }
  });

  it('DTMF (RFC 4733) digits land in the timeline, over A-law audio', async () => {
    await sipp(['-sn', 'uac_pcap', '-s', 'dtmf']);
    const events = await closedTimeline(sessionsFor('dtmf')[0]!);
    expect(
      events.filter((e) => e.type === 'user.dtmf').map((e) => (e.type === 'user.dtmf' ? e.data.digit : '')),
    ).toEqual(['1']);
    expect(events.some((e) => e.type === 'user.audio')).toBe(true);
  });

  it('CANCEL while ringing: 200 for the CANCEL, 487 for the INVITE, and no session', async () => {
    await sipp(['-sf', path.join(SIPP_SCENARIOS, 'cancel.xml'), '-s', 'ring']);
    expect(sessionsFor('ring')).toEqual([]);
  });

  it('re-INVITE to hold (sendonly, then inactive) and resume: the answers mirror the direction', async () => {
    await sipp(['-sf', path.join(SIPP_SCENARIOS, 'hold.xml'), '-s', 'hold']);
    await closedTimeline(sessionsFor('hold')[0]!);
  });

  it('the bridge ends a call with BYE (its route’s maximum duration)', async () => {
    await sipp(['-sf', path.join(SIPP_SCENARIOS, 'bridge-bye.xml'), '-s', 'bye']);
    await closedTimeline(sessionsFor('bye')[0]!);
  });

  it('a wrong password: 401 with a challenge, then 403; no session', async () => {
    await sipp(['-sf', path.join(SIPP_SCENARIOS, 'auth-wrong.xml'), '-s', 'auth', '-au', 'trunk', '-ap', 'wrong']);
    expect(sessionsFor('auth')).toEqual([]);
  });

  it('OPTIONS 200, 481 for an unknown dialog, 404 for an unknown number', async () => {
    await sipp(['-sf', path.join(SIPP_SCENARIOS, 'refusals.xml'), '-s', 'bad']);
  });

  it('malformed requests get a 400-class answer naming the problem, and calls go on', async () => {
    const socket = createSocket('udp4');
    const answers: string[] = [];
    socket.on('message', (m) => answers.push(m.toString('latin1')));
    await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
    const [host, port] = bridge.target.split(':');
    const head = (extra: string) =>
      `INVITE sip:plain@${host} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:${socket.address().port};branch=z9hG4bK-bad${answers.length}\r\n` +
      `From: <sip:x@h>;tag=1\r\nTo: <sip:plain@h>\r\nCall-ID: bad-${Math.random()}\r\nCSeq: 1 INVITE\r\n${extra}`;
    const bad = [
      head('Content-Length: 500\r\n\r\nv=0\r\n'),
      head('Content-Length: 99999999\r\n\r\n'),
      head('CSeq: 2 INVITE\r\n\r\n'),
    ];
    for (const message of bad) socket.send(message, Number(port), host);
    await until('answers to the malformed requests', () => answers.length === bad.length, WAIT_MS);
    socket.close();
    const statuses = answers.map((a) => Number(a.slice(8, 11))).sort();
    expect(statuses).toEqual([400, 400, 413]);
    expect(answers.every((a) => /Warning: 399 venus "/.test(a))).toBe(true);
    await sipp(['-sn', 'uac', '-s', 'plain']);
  });
});

function speechEvents(events: TimelineEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'user.speech' ? [e.data.state] : []));
}

function summary(events: TimelineEvent[]): string {
  return events.map((e) => (e.type === 'user.speech' ? `speech:${e.data.state}` : e.type)).join(' ');
}

function keys(values: Record<string, string | number>): string[] {
  return Object.entries(values).flatMap(([k, v]) => ['-key', k, String(v)]);
}
