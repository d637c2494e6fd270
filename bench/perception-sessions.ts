import { cpus, loadavg } from 'node:os';
import { createTimelineStore, ReferenceModelPort, SessionHost } from '@venus/gpu-worker';
import { FunctionRegistry, InProcessExecutor } from '@venus/harness-functions';
import { SessionConfigSchema } from '@venus/protocol';
import { type PerceptionSpeech, perceptionSpeech, roomNoise, summary } from './support/perception-speech.ts';

export interface PerceptionSessionsOptions {
  /** Session counts to run, in order. */
  counts: number[];
  chunkMs?: number;
  /** Seconds measured per count, after the warm-up. */
  seconds: number;
  /** Seconds before measuring, so every session has opened and spoken. Default 4. */
  warmupSeconds?: number;
  /** Inference threads of the port (each with its own recogniser thread). Default: one per core. */
  inferenceThreads?: number;
  speech?: PerceptionSpeech;
  onProgress?: (line: string) => void;
}

export interface PerceptionSessionsRow {
  sessions: number;
  steps: number;
  missed: number;
  stepP50Ms: number;
  stepP99Ms: number;
  /** Requests and overlaps that began while measuring (up to 3 s before its end), and how many a transcript covered. */
  utterancesSpoken: number;
  transcripts: number;
  /**
   * From sending the last audio input a transcript covers (the VAD's end of speech is 500 ms after
   * the words) to the transcript on the timeline: the recogniser's lag.
   */
  transcriptP50Ms: number;
  transcriptP99Ms: number;
  /**
   * Zero missed deadlines, and hearing kept up: >= 80% of utterances transcribed (the quiet background
   * speech may go unheard at any load), transcript lag p99 <= 1 s.
   */
  keptUp: boolean;
  /** Overlap verdicts while measuring: the assistant stopped, or carried on. */
  stops: number;
  continues: number;
  /** Process CPU (every thread: sessions, VAD, head, embedding, recognisers, speech synthesis, host) per session. */
  cpuMsPerSessionS: number;
  /** The same as a share of the machine (1 = every core busy). */
  cpuShare: number;
  hostLoad: number;
}

export interface PerceptionSessionsResult {
  chunkMs: number;
  cores: number;
  inferenceThreads: number;
  rows: PerceptionSessionsRow[];
  /** The largest count that ran with zero missed deadlines (0 when none did). */
  largestWithoutMisses: number;
  /** The largest count with zero missed deadlines whose sessions' hearing also kept up (see `keptUp`). */
  largestKeepingUp: number;
}

type Phase =
  | { kind: 'request'; clip: Int16Array; at: number }
  | { kind: 'waiting'; since: number }
  | { kind: 'overlap'; clip: Int16Array; at: number; startsIn: number }
  | { kind: 'after'; since: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * N reference-model sessions at once in real time through the model port and a real session
 * host, at 160 ms chunks, every one hearing for itself (Silero VAD, PocketSphinx, the overlap head
 * and its speech embedding, as the worker runs them): each session says a request (eSpeak NG
 * speech), waits for the assistant to answer, speaks over the answer (an interruption, a
 * backchannel, speech to someone else or background speech, in turn), and starts again once the
 * assistant has been quiet for a while. Counts missed step deadlines, transcripts and their
 * latency (a recogniser that falls behind misses no step deadline but comes back late), overlap
 * verdicts and the process's CPU per session. Figures, not pass/fail.
 *
 * @example
 *   const r = await runPerceptionSessions({ counts: [16, 32, 48, 64], seconds: 20 });
 *   console.log(r.largestWithoutMisses);
 */
export async function runPerceptionSessions(options: PerceptionSessionsOptions): Promise<PerceptionSessionsResult> {
  const chunkMs = options.chunkMs ?? 160;
  const speech = options.speech ?? perceptionSpeech();
  const inferenceThreads = options.inferenceThreads ?? cpus().length;
  const most = Math.max(...options.counts);
  const port = await ReferenceModelPort.create({
    maxSessions: most,
    inferenceThreads,
    recognition: { maxStreams: Math.ceil(most / inferenceThreads) },
  });
  const rows: PerceptionSessionsRow[] = [];
  try {
    for (const sessions of options.counts) {
      options.onProgress?.(`${sessions} sessions`);
      rows.push(await measure(port, sessions, chunkMs, options.warmupSeconds ?? 4, options.seconds, speech));
    }
  } finally {
    await port.close();
  }
  const clean = rows.filter((r) => r.missed === 0).map((r) => r.sessions);
  const keptUp = rows.filter((r) => r.keptUp).map((r) => r.sessions);
  return {
    chunkMs,
    cores: cpus().length,
    inferenceThreads,
    rows,
    largestWithoutMisses: clean.length > 0 ? Math.max(...clean) : 0,
    largestKeepingUp: keptUp.length > 0 ? Math.max(...keptUp) : 0,
  };
}

async function measure(
  port: ReferenceModelPort,
  sessions: number,
  chunkMs: number,
  warmupS: number,
  measureS: number,
  speech: PerceptionSpeech,
): Promise<PerceptionSessionsRow> {
  // No functions: a delegation comes back at once with the harness's apology, which is spoken too.
  const executor = new InProcessExecutor({ registry: new FunctionRegistry([]), concurrency: sessions * 4 });
  const store = createTimelineStore();
  const host = new SessionHost({ model: port, executor, store });
  const samples = chunkMs * 16;
  const ids = Array.from({ length: sessions }, (_, i) => `perception-${sessions}-${i}`);
  const lastAssistantAudio = new Map<string, number>();
  /**
   * Per session: when each audio input (by its input number, 1 = the first frame) was sent, and the
   * utterances spoken (their first and last input) not yet heard.
   */
  const sentAt = new Map<string, number[]>();

  const unheard = new Map<string, Array<{ from: number; to: number; measured: boolean }>>();
  const latencies: number[] = [];
  let measuring = false;
  let measureStart = Number.POSITIVE_INFINITY;
  let spoken = 0;
  let transcripts = 0;
  let stops = 0;
  let continues = 0;
  host.onFrame((frame) => {
    if (frame.kind !== 'timeline') return;
    const e = frame.event;
    const now = performance.now();
    if (e.type === 'assistant.audio') {
      lastAssistantAudio.set(frame.session, now);
      const playedMs = e.data.startMs + e.data.durationMs;
      const { utteranceId } = e.data;
      queueMicrotask(() =>
        host.handleFrame({ kind: 'playback_ack', session: frame.session, utteranceId, playedMs, source: 'client' }),
      );
    } else if (e.type === 'user.transcript') {
      // The transcript names the inputs that carried its speech: the utterances it covers were heard,
      // and its lag runs from when the last of those inputs was sent.
      // Sessions send audio only, so input n is the n-th frame sent.
      const { fromInputSeq: from, toInputSeq: to } = e.data.audio;
      const list = unheard.get(frame.session) ?? [];
      const covered = list.filter((u) => u.from <= to && u.to >= from);
      unheard.set(
        frame.session,
        list.filter((u) => !covered.includes(u)),
      );
      transcripts += covered.filter((u) => u.measured).length;
      const sent = sentAt.get(frame.session)?.[to - 1];
      if (measuring && sent !== undefined && sent >= measureStart) latencies.push(now - sent);
    } else if (e.type === 'assistant.interruption' && measuring) {
      if (e.data.action === 'continue') continues += 1;
      else stops += 1;
    }
  });

  const config = SessionConfigSchema.parse({ chunkMs });
  const timers: NodeJS.Timeout[] = [];
  ids.forEach((session, i) => {
    let phase: Phase = { kind: 'request', clip: speech.requests[i % speech.requests.length]!, at: 0 };
    let turn = 0;
    let tick = 0;
    const sent: number[] = [];
    sentAt.set(session, sent);

    // An utterance is registered as it starts: its transcript may come before its trailing silence is sent.
    const starts = (clip: Int16Array) => {
      const from = sent.length + 1;
      const list = unheard.get(session) ?? [];
      // Counted when it begins while measuring, up to 3 s before the end (so its transcript can come in the window).
      const measured = measuring && performance.now() <= measureStart + measureS * 1000 - 3000;
      list.push({ from, to: from + Math.ceil(clip.length / samples) - 1, measured });
      unheard.set(session, list);
      if (measured) spoken += 1;
    };
    // Sessions open at spread-out phases of the chunk period, as real sessions arrive.
    const open = setTimeout(
      () => {
        host.handleFrame({ kind: 'open', session, tenant: 'bench', config });
        timers.push(
          setInterval(() => {
            const now = performance.now();
            const pcm = roomNoise(samples, i * 7919 + tick++);
            const heard = lastAssistantAudio.get(session) ?? 0;
            switch (phase.kind) {
              case 'request':
              case 'overlap': {
                if (phase.kind === 'overlap' && phase.startsIn > 0) {
                  phase.startsIn -= 1;
                  break;
                }
                if (phase.at === 0) starts(phase.clip);
                const part = phase.clip.subarray(phase.at, phase.at + samples);
                for (let j = 0; j < part.length; j++) pcm[j] = part[j]!;
                phase.at += samples;
                if (phase.at >= phase.clip.length) {
                  phase = phase.kind === 'request' ? { kind: 'waiting', since: now } : { kind: 'after', since: now };
                }
                break;
              }
              case 'waiting':
                // The answer has started (or none came in 10 s): speak over it 0.5-1 s in.
                if (heard > phase.since || now - phase.since > 10_000) {
                  const overlap = speech.overlaps[(i + turn) % speech.overlaps.length]!;
                  phase = { kind: 'overlap', clip: overlap.pcm, at: 0, startsIn: 3 + ((i + turn) % 4) };
                }
                break;
              case 'after':
                // The assistant has been quiet for 1.5 s (or 8 s passed): the next request.
                if ((now - heard > 1500 && now - phase.since > 1500) || now - phase.since > 8000) {
                  turn += 1;
                  phase = { kind: 'request', clip: speech.requests[(i + turn) % speech.requests.length]!, at: 0 };
                }
                break;
            }
            sent.push(now);
            host.handleFrame({ kind: 'audio', session, pcm16k: new Uint8Array(pcm.buffer) });
          }, chunkMs),
        );
      },
      Math.floor((i * chunkMs) / sessions),
    );
    timers.push(open);
  });

  await sleep(warmupS * 1000);
  host.stepStats.reset();
  measuring = true;
  measureStart = performance.now();
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await sleep(measureS * 1000);
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = performance.now() - wallBefore;
  measuring = false;
  const stats = host.stepStats;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const lat = summary(latencies);
  const row: PerceptionSessionsRow = {
    sessions,
    steps: stats.steps,
    missed: stats.missed,
    stepP50Ms: round(stats.percentile(50)),
    stepP99Ms: round(stats.percentile(99)),
    utterancesSpoken: spoken,
    transcripts,
    transcriptP50Ms: round(lat.p50),
    transcriptP99Ms: round(lat.p99),
    keptUp:
      stats.missed === 0 && transcripts >= 0.8 * spoken && spoken > 0 && Number.isFinite(lat.p99) && lat.p99 <= 1000,
    stops,
    continues,
    cpuMsPerSessionS: round(cpuMs / (wallMs / 1000) / sessions),
    cpuShare: round(cpuMs / wallMs / cpus().length, 3),
    hostLoad: round(loadavg()[0] ?? 0),
  };
  for (const t of timers) clearInterval(t);
  await host.close();
  await executor.close();
  await store.close();
  return row;
}

function round(v: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
