import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  DELEGATION_LIMITS,
  type DelegationExecutor,
  type DelegationRequest,
  type ModelPort,
  SessionConfigSchema,
  type WorkEvent,
  type WorkEventListener,
} from '@venus/protocol';
import { EspeakTts } from '../reference-model/espeak-tts.ts';
import { ReferenceModelPort } from '../reference-model/reference-model-port.ts';
import { resamplePcm16 } from '../reference-model/resample.ts';
import { SessionHost } from '../session-host/session-host.ts';
import { createTimelineStore } from '../timeline/index.ts';

export interface BenchCapacityOptions {
  /** Session counts to measure, in order. Default 8, 16, 32, 64, 96, 128. */
  sessionCounts?: number[];
  chunkMs?: number;
  /** Measured seconds per count, after the warm-up. Default 10. */
  seconds?: number;
  /** Seconds before measuring, so every session has opened and spoken once. Default 3. */
  warmupSeconds?: number;
  /** The port under test. Default: a ReferenceModelPort whose capacity is lifted to the largest count. */
  port?: ModelPort;
  /** A fresh executor per count. Default: an in-memory one that answers every delegation after `workMs`. */
  createExecutor?: () => DelegationExecutor;
  /** Latency of the default executor's work. Default 800 ms. */
  workMs?: number;
  /** Each session speaks (a short synthesised sentence) once per this many seconds. Default 6. */
  speechEverySeconds?: number;
  /** Each session types a request once per this many seconds. Default 8. */
  requestEverySeconds?: number;
  onProgress?: (message: string) => void;
}

export interface CapacityRow {
  sessions: number;
  /** Sessions that opened (the port may refuse past its capacity). */
  opened: number;
  steps: number;
  stepP50Ms: number;
  stepP99Ms: number;
  /** Chunk boundaries whose previous step had not returned. */
  missed: number;
  missRate: number;
  /** Resident memory added per open session (process-wide: worker threads included). */
  rssPerSessionMb: number;
  /** Main event loop delay p99 while measuring: the host's own share of the load. */
  eventLoopP99Ms: number;
  /** Process CPU time over wall time, as a share of all cores (1 = every core busy). */
  cpuShare: number;
  /** Process CPU time (all threads) per session-step: the cost that decides capacity on a quiet machine. */
  cpuMsPerStep: number;
  /** The machine's 1-minute load average when the measurement ended: other work competing for the cores. */
  hostLoad: number;
  delegations: number;
}

export interface CapacityResult {
  model: string;
  advertisedMaxSessions: number;
  cores: number;
  chunkMs: number;
  rows: CapacityRow[];
}

const REQUESTS = [
  "What's the weather in Paris?",
  'What time is it in Tokyo?',
  'What is 12 times 7?',
  "What's the weather in Rome?",
];

/**
 * Answers every delegation after a fixed delay with a short canned result: a stand-in for the
 * harness, so the bench measures the foreground alone.
 */
class CannedExecutor implements DelegationExecutor {
  private readonly listeners = new Set<WorkEventListener>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly workMs: number) {}

  async submit(request: DelegationRequest): Promise<void> {
    const emit = (e: WorkEvent) => {
      for (const l of this.listeners) l(e);
    };
    const identity = { session: request.session, incarnation: request.incarnation, workId: request.workId };
    const t = setTimeout(() => {
      this.timers.delete(t);
      emit({ kind: 'state', ...identity, state: 'RUNNING' });
      const now = Date.now();
      emit({
        kind: 'result',
        ...identity,
        result: {
          ...identity,
          ok: true,
          text: 'Here is the answer you asked for.',
          policy: request.policy ?? 'when_idle',
          completedAtMs: now,
          expiresAtMs: now + DELEGATION_LIMITS.resultTtlMs,
        },
      });
    }, this.workMs);
    this.timers.add(t);
  }

  async cancel(): Promise<void> {}

  subscribe(listener: WorkEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The capacity curve of a model port behind real session hosts on real 160 ms timers: for each
 * session count, sessions open at spread-out phases, stream microphone audio every chunk (quiet
 * noise, with a spoken sentence every few seconds) and type a request every few seconds (so
 * delegations run and results are admitted and spoken), with every audio chunk acknowledged as
 * played. Reports step latency, missed deadlines and memory per session. Figures, not pass/fail.
 *
 * @example
 *   const r = await benchCapacity({ sessionCounts: [8, 16, 32, 64], chunkMs: 160, seconds: 10 });
 *   console.table(r.rows);
 */
export async function benchCapacity(options: BenchCapacityOptions = {}): Promise<CapacityResult> {
  const counts = options.sessionCounts ?? [8, 16, 32, 64, 96, 128];
  const chunkMs = options.chunkMs ?? 160;
  const seconds = options.seconds ?? 10;
  const warmupSeconds = options.warmupSeconds ?? 3;
  const progress = options.onProgress ?? (() => {});
  const ownPort = options.port === undefined;
  const port = options.port ?? (await ReferenceModelPort.create({ maxSessions: Math.max(...counts) }));
  const tts = await EspeakTts.create();
  const speech16k = resamplePcm16(await tts.synthesize('Hmm, could you look something up for me?'), 24_000, 16_000);
  tts.close();
  const caps = await port.capabilities();
  const rows: CapacityRow[] = [];
  try {
    for (const sessions of counts) {
      progress(`capacity: ${sessions} sessions`);
      rows.push(await measure(port, sessions, chunkMs, warmupSeconds, seconds, speech16k, options));
    }
  } finally {
    if (ownPort) await port.close();
  }
  return { model: caps.model, advertisedMaxSessions: caps.maxSessions, cores: cpus().length, chunkMs, rows };
}

async function measure(
  port: ModelPort,
  sessions: number,
  chunkMs: number,
  warmupS: number,
  measureS: number,
  speech16k: Int16Array,
  o: BenchCapacityOptions,
): Promise<CapacityRow> {
  const executor = o.createExecutor?.() ?? new CannedExecutor(o.workMs ?? 800);
  const store = createTimelineStore();
  const host = new SessionHost({ model: port, executor, store });
  const ids = Array.from({ length: sessions }, (_, i) => `cap-${sessions}-${i}`);
  const opened = new Set<string>();
  let delegations = 0;
  host.onFrame((frame) => {
    if (frame.kind === 'closed') opened.delete(frame.session);
    if (frame.kind !== 'timeline') return;
    const e = frame.event;
    if (e.type === 'session.incarnation') opened.add(frame.session);
    if (e.type === 'assistant.delegate') delegations += 1;
    if (e.type === 'assistant.audio') {
      const playedMs = e.data.startMs + e.data.durationMs;
      const { utteranceId } = e.data;
      queueMicrotask(() =>
        host.handleFrame({ kind: 'playback_ack', session: frame.session, utteranceId, playedMs, source: 'client' }),
      );
    }
  });
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const config = SessionConfigSchema.parse({ chunkMs });
  const samples = (chunkMs * 16_000) / 1000;
  const speechChunks = Math.ceil(speech16k.length / samples);
  const speechEvery = Math.max(speechChunks + 1, Math.round(((o.speechEverySeconds ?? 6) * 1000) / chunkMs));
  const requestEvery = Math.max(1, Math.round(((o.requestEverySeconds ?? 8) * 1000) / chunkMs));
  const timers: NodeJS.Timeout[] = [];
  // Sessions open at spread-out phases of the chunk period, as real sessions arrive.
  ids.forEach((session, i) => {
    const phase = Math.floor((i * chunkMs) / sessions);
    const offset = (i * 7919) % speechEvery;
    let tick = 0;
    timers.push(
      setTimeout(() => {
        host.handleFrame({ kind: 'open', session, tenant: 'bench', config });
        timers.push(
          setInterval(() => {
            const k = tick++;
            const inSpeech = (k + offset) % speechEvery;
            const pcm = new Int16Array(samples);
            if (inSpeech < speechChunks) pcm.set(speech16k.subarray(inSpeech * samples, (inSpeech + 1) * samples));
            else for (let j = 0; j < pcm.length; j++) pcm[j] = Math.round((Math.random() - 0.5) * 60);
            host.handleFrame({ kind: 'audio', session, pcm16k: new Uint8Array(pcm.buffer) });
            if ((k + offset) % requestEvery === requestEvery - 1)
              host.handleFrame({ kind: 'text', session, itemId: `r${k}`, text: REQUESTS[k % REQUESTS.length]! });
          }, chunkMs),
        );
      }, phase),
    );
  });

  await sleep(warmupS * 1000);
  host.stepStats.reset();
  const delegationsBefore = delegations;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await sleep(measureS * 1000);
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = performance.now() - wallBefore;
  loop.disable();
  const rssAfter = process.memoryUsage().rss;
  const stats = host.stepStats;
  const row: CapacityRow = {
    sessions,
    opened: opened.size,
    steps: stats.steps,
    stepP50Ms: round(stats.percentile(50)),
    stepP99Ms: round(stats.percentile(99)),
    missed: stats.missed,
    missRate: round(stats.missed / Math.max(1, stats.steps + stats.missed), 4),
    rssPerSessionMb: round((rssAfter - rssBefore) / Math.max(1, opened.size) / 2 ** 20),
    eventLoopP99Ms: round(loop.percentile(99) / 1e6),
    cpuShare: round((cpu.user + cpu.system) / 1000 / wallMs / cpus().length, 3),
    cpuMsPerStep: round((cpu.user + cpu.system) / 1000 / Math.max(1, stats.steps), 3),
    hostLoad: round(loadavg()[0] ?? 0),
    delegations: delegations - delegationsBefore,
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
