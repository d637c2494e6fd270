import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelSession } from '@venus/protocol';
import { type ReferenceModelCalibration, ReferenceModelPort } from './reference-model-port.ts';

export interface ReferenceModelBenchOptions {
  /** Sessions stepped together each chunk. Default 32. */
  sessions?: number;
  /** Chunks to step. Default 50. */
  rounds?: number;
  chunkMs?: number;
  /** An existing port to measure; otherwise one is created and closed. */
  port?: ReferenceModelPort;
}

export interface ReferenceModelBenchResult {
  sessions: number;
  rounds: number;
  chunkMs: number;
  /** Wall time of a round (all sessions stepping concurrently) divided by the sessions. */
  msPerSessionStep: number;
  roundP50Ms: number;
  roundP95Ms: number;
  roundMaxMs: number;
  /** From typing a request to the first step that carries its speech, through the port. */
  timeToAudioMs: number;
  calibration: ReferenceModelCalibration;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/**
 * Measures the reference model as a session host would drive it: `sessions` sessions stepping
 * together every chunk with fresh user audio, a quarter of them speaking, and the time from a
 * typed request to its first audio.
 *
 * @example
 *   const r = await benchReferenceModel({ sessions: 32, rounds: 50, chunkMs: 160 });
 *   console.log(r.msPerSessionStep, r.timeToAudioMs);
 */
export async function benchReferenceModel(
  options: ReferenceModelBenchOptions = {},
): Promise<ReferenceModelBenchResult> {
  const chunkMs = options.chunkMs ?? 160;
  const rounds = options.rounds ?? 50;
  const port = options.port ?? (await ReferenceModelPort.create());
  const sessionCount = Math.min(options.sessions ?? 32, port.calibration.maxSessions - 1);
  try {
    const sessions: ModelSession[] = [];
    for (let i = 0; i < sessionCount; i++)
      sessions.push(await port.openSession({ sessionId: `bench-${i}`, incarnation: 0 }));
    const pcm = new Int16Array(chunkMs * 16).map((_, i) => Math.round(800 * Math.sin(i / 7)));
    const seqs = sessions.map(() => 0);
    await Promise.all(
      sessions.map((s, i) =>
        i % 4 === 0 ? s.appendText({ inputSeq: ++seqs[i]!, itemId: 'bench', text: 'what time is it in Tokyo' }) : null,
      ),
    );
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      await Promise.all(
        sessions.map(async (s, i) => {
          const inputSeq = ++seqs[i]!;
          await s.appendAudio({ inputSeq, pcm16k: pcm });
          await s.step({
            chunk: round,
            inputSeqCutoff: inputSeq,
            atMs: (round + 1) * chunkMs,
            assistantAudible: false,
          });
        }),
      );
      times.push(performance.now() - started);
    }
    await Promise.all(sessions.map((s) => s.close('bench done')));

    const probe = await port.openSession({ sessionId: 'bench-time-to-audio', incarnation: 0 });
    const asked = performance.now();
    await probe.appendText({ inputSeq: 1, itemId: 'probe', text: 'what is the weather in Reykjavik' });
    let timeToAudioMs = Number.NaN;
    for (let chunk = 0; chunk < 2000; chunk++) {
      const step = await probe.step({
        chunk,
        inputSeqCutoff: 1,
        atMs: performance.now() - asked,
        assistantAudible: false,
      });
      if (step.audio) {
        timeToAudioMs = performance.now() - asked;
        break;
      }
      await sleep(1);
    }
    await probe.close('bench done');

    const sorted = [...times].sort((a, b) => a - b);
    const total = times.reduce((a, b) => a + b, 0);
    return {
      sessions: sessionCount,
      rounds,
      chunkMs,
      msPerSessionStep: total / (rounds * Math.max(1, sessionCount)),
      roundP50Ms: percentile(sorted, 0.5),
      roundP95Ms: percentile(sorted, 0.95),
      roundMaxMs: sorted.at(-1) ?? 0,
      timeToAudioMs,
      calibration: port.calibration,
    };
  } finally {
    if (!options.port) await port.close();
  }
}
