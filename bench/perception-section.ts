import { loadavg } from 'node:os';
import { type ComponentCost, type PerceptionCostResult, runPerceptionCost } from './perception-cost.ts';
import { type PerceptionSessionsResult, runPerceptionSessions } from './perception-sessions.ts';
import { fmt, table } from './report.ts';
import { perceptionSpeech } from './support/perception-speech.ts';

export interface PerceptionSectionOptions {
  /** Sessions of the cost measurement (one after another). */
  costSessions: number;
  /** Session counts of the real-time sweep. */
  counts: number[];
  /** Seconds measured per count. */
  seconds: number;
  warmupSeconds?: number;
  onProgress?: (line: string) => void;
}

export interface PerceptionSection {
  cost: PerceptionCostResult;
  sessions: PerceptionSessionsResult;
  /** Machine load (1-minute average) before each part. */
  loadBefore: { cost: number; sessions: number };
  text: string;
}

/** The sweep's target: sessions per 2-core worker at 160 ms chunks with zero missed deadlines. */
export const SESSIONS_TARGET = 48;

/**
 * `npm run bench -- --only perception`: what hearing costs one session (recogniser, VAD, speech
 * embedding, overlap head: CPU ms per second of audio) and the sessions a worker carries in real
 * time at 160 ms chunks with every session hearing. See perception-cost.ts and perception-sessions.ts.
 */
export async function perceptionSection(o: PerceptionSectionOptions): Promise<PerceptionSection> {
  const speech = perceptionSpeech();
  const loadCost = loadavg()[0] ?? 0;
  o.onProgress?.(`cost: ${o.costSessions} sessions one after another`);
  const cost = await runPerceptionCost({ sessions: o.costSessions, speech });
  const loadSessions = loadavg()[0] ?? 0;
  const sessions = await runPerceptionSessions({
    counts: o.counts,
    seconds: o.seconds,
    ...(o.warmupSeconds !== undefined ? { warmupSeconds: o.warmupSeconds } : {}),
    speech,
    ...(o.onProgress ? { onProgress: (line: string) => o.onProgress?.(`real time: ${line}`) } : {}),
  });
  return {
    cost,
    sessions,
    loadBefore: { cost: loadCost, sessions: loadSessions },
    text: formatPerception(cost, sessions, { cost: loadCost, sessions: loadSessions }),
  };
}

export function formatPerception(
  cost: PerceptionCostResult,
  sessions: PerceptionSessionsResult,
  load: { cost: number; sessions: number },
): string {
  const row = (component: string, c: ComponentCost, note = '') => ({
    component,
    'median ms/audio s': c.p50,
    'p99 ms/audio s': c.p99,
    'mean ms/audio s': c.mean,
    'mean while overlapping': c.overlapMean,
    note,
  });
  const k = cost.cost;
  const lines = [
    table(
      `Perception cost per session (CPU ms per second of audio, per ${cost.chunkMs} ms step; eSpeak NG speech: a request, the answer, speech over it; ${cost.sessions} sessions one at a time on the worker's own step, unbatched; load avg ${fmt(load.cost)})`,
      [
        row('recogniser (PocketSphinx wasm)', k.recogniser, 'decodes speech stretches only'),
        row('VAD (Silero)', k.vad),
        row(
          'speech embedding',
          k.embedding,
          cost.present.embedding === 'in the step'
            ? 'hops of overlapping speech'
            : cost.present.embedding === 'beside the step'
              ? 'beside the step: the worker runs it only with a head that takes it'
              : 'ABSENT: not in this worker',
        ),
        row(
          'overlap head',
          k.head,
          cost.present.head ? '' : 'NOT RUN: no head the worker can use (none, or not for these features)',
        ),
        row('rest of the step', k.rest, 'voice activity, features, dialogue'),
        row('total', k.total),
      ],
    ),
    `${cost.steps} steps, ${fmt(cost.audioS)} s of audio, ${cost.overlapSteps} steps with the user speaking over the assistant, ` +
      `${cost.headRuns} head batches. First verdict per overlap: ` +
      cost.verdicts
        .map((v) =>
          v.verdict
            ? `${v.cls} -> ${v.verdict.action}/${v.verdict.cause} at ${fmt(v.afterOnsetMs ?? 0)} ms`
            : `${v.cls} -> none`,
        )
        .join('; ') +
      ' (ms after the clip began, 300 ms of lead-in silence included). ' +
      `At this mean, hearing alone would let a 2-core worker carry ${fmt(2000 / Math.max(k.total.mean, 1e-6))} sessions ` +
      `(${fmt(2000 / Math.max(k.total.mean - k.recogniser.mean, 1e-6))} without the recogniser), with nothing else to run; ` +
      (cost.present.embedding === 'absent'
        ? 'the speech embedding is NOT included: gpu-worker/src/perception/speech-embedding.ts is not in this worker.'
        : `the speech embedding is included (${cost.present.embedding}).`),
    table(
      `Sessions in real time through the port (reference model, ${sessions.chunkMs} ms chunks, ${sessions.inferenceThreads} inference threads with a recogniser thread each, ${sessions.cores} cores; every session speaks, is answered and speaks over the answer; target: >= ${SESSIONS_TARGET} sessions with zero missed deadlines; load avg ${fmt(load.sessions)} before)`,
      sessions.rows.map((r) => ({
        sessions: r.sessions,
        'missed deadlines': `${r.missed}/${r.steps + r.missed}`,
        'step p50 / p99 ms': `${fmt(r.stepP50Ms)} / ${fmt(r.stepP99Ms)}`,
        'transcripts / utterances': `${r.transcripts}/${r.utterancesSpoken}`,
        'transcript lag p50 / p99 ms': `${fmt(r.transcriptP50Ms)} / ${fmt(r.transcriptP99Ms)}`,
        'hearing kept up': r.keptUp ? 'yes' : 'no',
        'stops / carry-ons': `${r.stops} / ${r.continues}`,
        'CPU ms/s per session': r.cpuMsPerSessionS,
        'machine CPU share': r.cpuShare,
        'load avg': r.hostLoad,
      })),
    ),
    `largest session count with zero missed deadlines: ${sessions.largestWithoutMisses}; with zero missed deadlines and hearing that kept up ` +
      `(>= 80% of utterances transcribed, transcript lag p99 <= 1 s): ${sessions.largestKeepingUp} ` +
      `(of ${sessions.rows.map((r) => r.sessions).join(', ')}; target ${SESSIONS_TARGET}). ` +
      'Transcript lag runs from sending the last audio a transcript covers (the VAD ends speech 500 ms after the words) to the transcript; ' +
      'a recogniser thread that falls behind misses no step deadline, and one more than 5 s behind refuses audio (those words are lost), so it shows here.',
  ];
  return lines.join('\n');
}
