import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MemoryTimelineStore, ReferenceModelPort, SessionHost } from '@venus/gpu-worker';
import { FunctionRegistry, InProcessExecutor } from '@venus/harness-functions';
import { SessionConfigSchema } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordPlayedTimeline } from './support/played-timeline.ts';
import { speechClip } from './support/speech-clip.ts';
import { until } from './support/until.ts';

/**
 * Decisions between chunks, on the real reference model (Silero VAD, the recogniser thread, the
 * overlap policy) behind a real session host at the server's default 1000 ms chunks. The clock,
 * the boundaries and the perception ticks are driven by hand, so the test shows by order, not by
 * timing, that a user talking over the assistant is stopped by a tick inside the chunk they spoke
 * in, before that chunk's boundary comes.
 */
const CHUNK_MS = 1000;
const TICK_MS = 80;
let port: ReferenceModelPort;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'venus-tick-'));
  port = await ReferenceModelPort.create({ perceptionTickMs: TICK_MS });
});
afterAll(async () => {
  await port?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('perception ticks between chunk boundaries', () => {
  it('stops the assistant within the chunk the user took the floor in, at 1000 ms chunks', async () => {
    // Without the clip's leading 300 ms of silence: the user starts talking with the chunk.
    const interruption = speechClip(
      dir,
      'No no, listen, I need to ask you about something completely different.',
    ).slice(16 * 300);
    const executor = new InProcessExecutor({ registry: new FunctionRegistry([]) });
    const store = new MemoryTimelineStore();
    let clock = Date.now();
    const host = new SessionHost({ model: port, executor, store, autoStep: false, now: () => clock });
    const { of } = recordPlayedTimeline(host);
    // Waits for the host's asynchronous work; the bound only ends a hung test, it times nothing.
    const settle = (done: () => boolean, what: string) => until(what, done);
    const send = (pcm: Int16Array) =>
      host.handleFrame({
        kind: 'audio',
        session: 'ticks',
        pcm16k: new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength),
      });
    try {
      host.handleFrame({
        kind: 'open',
        session: 'ticks',
        tenant: 't',
        config: SessionConfigSchema.parse({ chunkMs: CHUNK_MS }),
      });
      await settle(() => host.session('ticks') !== undefined, 'the session opening');
      const session = host.session('ticks')!;
      const boundary = async () => {
        const steps = session.stats.steps;
        clock += CHUNK_MS;
        session.boundary();
        await settle(() => session.stats.steps > steps, 'a chunk step');
      };
      host.handleFrame({ kind: 'text', session: 'ticks', itemId: 'i1', text: 'what time is it in New York' });
      for (let i = 0; i < 30 && of('assistant.audio').length === 0; i++) {
        send(new Int16Array(16 * CHUNK_MS));
        await boundary();
      }
      const speaking = of('assistant.audio')[0]!.data.utteranceId;
      const stepsBefore = session.stats.steps;

      // The user talks over the assistant: 80 ms of microphone audio, then a tick, until the chunk ends.
      const per = 16 * TICK_MS;
      let ticks = 0;
      for (let at = 0; at + per <= 16 * (CHUNK_MS - TICK_MS) && of('assistant.interruption').length === 0; at += per) {
        send(interruption.slice(at, at + per));
        clock += TICK_MS;
        const before = session.stats.ticks;
        session.perceptionTick();
        await settle(() => session.stats.ticks > before, 'a perception tick');
        ticks += 1;
      }
      expect(session.stats.steps).toBe(stepsBefore);
      expect(of('assistant.interruption').map((e) => e.data)).toEqual([
        expect.objectContaining({ action: 'discard', cause: 'interruption', utteranceId: speaking }),
      ]);
      expect(
        of('assistant.utterance')
          .filter((e) => e.data.utteranceId === speaking)
          .map((e) => e.data.phase),
      ).toEqual(['started', 'finished']);
      expect(of('user.speech')[0]?.data.state).toBe('started');
      // Under the chunk: the v1 rules stop at 600 ms of loud speech at the latest, words sooner.
      expect(ticks).toBeLessThan(CHUNK_MS / TICK_MS);
      // The rest of the chunk's audio is not paced out for the cut utterance at the next boundary.
      const audioBefore = of('assistant.audio').length;
      await boundary();
      expect(
        of('assistant.audio')
          .slice(audioBefore)
          .filter((e) => e.data.utteranceId === speaking),
      ).toEqual([]);
    } finally {
      await host.close();
      await executor.close();
      await store.close();
    }
  });
});
