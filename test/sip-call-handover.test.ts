import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { heardText, type TimelineEvent } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisTimelineStore } from '../gpu-worker/src/timeline/index.ts';
import { CITY_QUESTION, type FleetCluster, relaySessions, startFleetCluster } from './support/fleet-cluster.ts';
import { testRedisUrl } from './support/redis.ts';
import { SipUac } from './support/sip-uac.ts';
import { until } from './support/until.ts';

const text = (events: TimelineEvent[], utteranceId: string): string =>
  events
    .filter((e) => e.type === 'assistant.text' && e.data.utteranceId === utteranceId)
    .map((e) => (e.type === 'assistant.text' ? e.data.delta : ''))
    .join('');

/**
 * Regression (issue 14, "a SIP call on a draining worker is not handed over; it ends at the drain
 * deadline"): the SIP bridge held one plain relay link to one worker, so a rolling update hung up on
 * every caller. Now it places calls as the edge places sessions (FleetWorkerLink): a drained
 * worker's call moves to another worker with its session, the caller stays on the line, and the
 * rebuilt context answers the follow-up.
 *
 * Real processes on real Redis: two GPU workers (plus the fleet's edge and harness), the SIP bridge
 * over both workers' relays, and a SIP caller of the test's own over UDP with an RTP socket.
 */
describe('a SIP call whose GPU worker drains', () => {
  let cluster: FleetCluster;
  let bridge: ChildProcess;
  let output = '';
  let dir: string;
  let sip: Socket;
  let rtp: Socket;

  beforeAll(async () => {
    cluster = await startFleetCluster({
      name: 'sip-drain',
      workers: 2,
      harnessLatencyMs: 100,
      harnessConcurrency: 2,
      maxSessionsPerWorker: 4,
    });
    dir = mkdtempSync(path.join(tmpdir(), 'venus-sip-drain-'));
    writeFileSync(path.join(dir, 'routes.json'), JSON.stringify({ routes: [{ number: '*', tenant: 'default' }] }));
    bridge = spawn(process.execPath, ['--import', 'tsx', 'sip-bridge/src/sip-main.ts'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        VENUS_SIP_PORT: '0',
        VENUS_SIP_CONFIG: path.join(dir, 'routes.json'),
        VENUS_WORKERS: cluster.workers.map((w) => w.url).join(','),
        VENUS_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (d: Buffer) => {
      output += d.toString();
    };
    bridge.stdout?.on('data', collect);
    bridge.stderr?.on('data', collect);
    await until('the bridge is ready', () => /sip bridge ready/.test(output) || bridge.exitCode !== null, 90_000);
    if (bridge.exitCode !== null) throw new Error(`the bridge exited: ${output}`);
    sip = createSocket('udp4');
    rtp = createSocket('udp4');
    await new Promise<void>((r) => sip.bind(0, '127.0.0.1', r));
    await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', r));
  }, 240_000);

  afterAll(async () => {
    sip?.close();
    rtp?.close();
    if (bridge && bridge.exitCode === null) {
      bridge.kill('SIGTERM');
      await new Promise((r) => bridge.once('exit', r));
    }
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the caller on the line, on another worker, with the conversation so far', async () => {
    const store = new RedisTimelineStore({ url: testRedisUrl(), prefix: cluster.prefix });
    const target = /sip bridge ready: sip:(\S+) /.exec(output)![1]!;
    const byes: string[] = [];
    sip.on('message', (m) => {
      const message = m.toString('latin1');
      if (message.startsWith('BYE ')) byes.push(message);
    });
    let rtpPackets = 0;
    rtp.on('message', () => {
      rtpPackets += 1;
    });
    try {
      const call = new SipUac(sip, target, 'sip-drain-call');
      await call.invite('1000', rtp.address().port);
      const session = /"call answered"[^\n]*"session":"([^"]+)"|"session":"([^"]+)"[^\n]*"call answered"/.exec(output);
      const sessionId = session![1] ?? session![2]!;
      let events: TimelineEvent[] = [];
      const read = async () => {
        events = await store.read(sessionId);
      };

      // The model asks which city, and the caller's phone plays the question (RTP sent counts as heard).
      expect(await call.message('what is the weather')).toBe(200);
      let question = '';
      await until(
        'the city question to be spoken and played',
        () => {
          const done = events.find(
            (e) =>
              e.type === 'assistant.utterance' &&
              e.data.phase === 'finished' &&
              text(events, e.data.utteranceId).trim() === CITY_QUESTION,
          );
          if (done?.type !== 'assistant.utterance') return false;
          question = done.data.utteranceId;
          const audioMs = events
            .filter((e) => e.type === 'assistant.audio' && e.data.utteranceId === question)
            .reduce(
              (end, e) => (e.type === 'assistant.audio' ? Math.max(end, e.data.startMs + e.data.durationMs) : end),
              0,
            );
          return events.some(
            (e) =>
              e.type === 'playback.ack' &&
              e.data.utteranceId === question &&
              heardText([{ text: CITY_QUESTION, durationMs: audioMs }], e.data.playedMs).includes('weather'),
          );
        },
        90_000,
        read,
      );

      const counts = await Promise.all(cluster.workers.map((w) => relaySessions(w)));
      const drained = cluster.workers[counts.indexOf(1)]!;
      process.kill(drained.process.pid, 'SIGTERM');
      await until(
        'the session to resume on the other worker',
        () => events.some((e) => e.type === 'session.incarnation' && e.data.incarnation === 1),
        90_000,
        read,
      );
      expect(await drained.process.exited).toBe(0);
      const other = cluster.workers.find((w) => w !== drained)!;
      expect(await relaySessions(other)).toBe(1);

      // The follow-up only makes sense with the earlier turn: answered on the new worker, and spoken.
      const rtpBefore = rtpPackets;
      expect(await call.message('Paris')).toBe(200);
      await until(
        'the weather in Paris to be answered',
        () =>
          events.some((e) => e.type === 'assistant.text' && /weather in Paris/.test(text(events, e.data.utteranceId))),
        90_000,
        read,
      );
      await until('assistant audio to reach the caller after the move', () => rtpPackets > rtpBefore + 10, 60_000);
      expect(byes).toEqual([]);
      expect(events.some((e) => e.type === 'session.closed')).toBe(false);
      expect(await call.bye()).toBe(200);
    } finally {
      await store.close();
    }
  }, 400_000);
});
