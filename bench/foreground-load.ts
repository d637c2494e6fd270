import { createTimelineStore, type ReferenceModelPort, SessionHost } from '@venus/gpu-worker';
import { FunctionRegistry, InProcessExecutor, type VenusFunction } from '@venus/harness-functions';
import { type SessionConfig, SessionConfigSchema } from '@venus/protocol';
import { z } from 'zod';

export interface ForegroundLoadOptions {
  port: ReferenceModelPort;
  sessions: number;
  chunkMs: number;
  warmupS: number;
  measureS: number;
  /** Keep about this many delegations in flight per session, each taking minMs..maxMs. */
  delegations?: { inFlightPerSession: number; minMs: number; maxMs: number };
}

export interface ForegroundLoadResult {
  sessions: number;
  steps: number;
  stepP50Ms: number;
  stepP99Ms: number;
  missed: number;
  missRate: number;
  rssPerSessionMb: number;
  delegationsSubmitted: number;
  meanInFlightPerSession: number;
}

const REQUESTS = [
  "What's the weather in Paris?",
  'What time is it in Tokyo?',
  'Convert 5 miles to km',
  "What's the weather in Rome?",
  'What time is it in New York?',
  'What is 12 times 7?',
];

/** A function with a 2–10 s latency, as a remote API would have. */
function slowLookup(minMs: number, maxMs: number, inFlight: Map<string, number>): VenusFunction {
  const fn: VenusFunction<{ query: string }> = {
    name: 'slow_lookup',
    description: 'Looks up weather, time and calculations from a slow remote service.',
    parameters: z.object({ query: z.string() }),
    examples: REQUESTS,
    keywords: ['weather', 'time', 'convert', 'times', 'calculate'],
    extract: (query) => ({ query }),
    async run(args, ctx) {
      inFlight.set(ctx.session, (inFlight.get(ctx.session) ?? 0) + 1);
      try {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, minMs + Math.random() * (maxMs - minMs));
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(t);
            reject(ctx.signal.reason);
          });
        });
      } finally {
        inFlight.set(ctx.session, (inFlight.get(ctx.session) ?? 1) - 1);
      }
      return { data: { query: args.query }, speech: 'Done.' };
    },
  };
  return fn as unknown as VenusFunction;
}

/**
 * Runs N sessions on one session host with the reference model for real: every session streams
 * microphone audio each chunk (silence with a little noise), and optionally types requests so that
 * a target number of slow delegations is in flight. Reports foreground step latency, missed chunk
 * deadlines and resident memory per session.
 */
export async function runForegroundLoad(o: ForegroundLoadOptions): Promise<ForegroundLoadResult> {
  const inFlight = new Map<string, number>();
  const registry = new FunctionRegistry(
    o.delegations ? [slowLookup(o.delegations.minMs, o.delegations.maxMs, inFlight)] : [],
  );
  // Room for every session's 8 slow calls at once (the default global concurrency of 64 would queue them).
  const executor = new InProcessExecutor({
    registry,
    concurrency: o.sessions * (o.delegations?.inFlightPerSession ?? 1),
  });
  const store = createTimelineStore();
  const host = new SessionHost({ model: o.port, executor, store });
  let submitted = 0;
  host.onFrame((frame) => {
    if (frame.kind !== 'timeline') return;
    const e = frame.event;
    if (e.type === 'assistant.delegate') submitted += 1;
    if (e.type === 'assistant.audio') {
      const playedMs = e.data.startMs + e.data.durationMs;
      queueMicrotask(() =>
        host.handleFrame({
          kind: 'playback_ack',
          session: frame.session,
          utteranceId: e.data.utteranceId,
          playedMs,
          source: 'client',
        }),
      );
    }
  });
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const config: SessionConfig = SessionConfigSchema.parse({ chunkMs: o.chunkMs });
  const ids = Array.from({ length: o.sessions }, (_, i) => `bench-${i}`);
  for (const session of ids) host.handleFrame({ kind: 'open', session, tenant: 'bench', config });

  const samples = (o.chunkMs * 16_000) / 1000;
  const mic = setInterval(() => {
    for (const session of ids) {
      const pcm = new Int16Array(samples);
      for (let i = 0; i < pcm.length; i++) pcm[i] = (Math.random() - 0.5) * 60;
      host.handleFrame({ kind: 'audio', session, pcm16k: new Uint8Array(pcm.buffer) });
    }
  }, o.chunkMs);
  // Each session types a new request about every 0.95 s while it has fewer than the target in flight.
  // The reference model delegates every request (following a new one parks the reply in progress),
  // so slow functions pile up to about the target.
  let typed = 0;
  const lastTypedAt = new Map<string, number>();
  const maybeType = (session: string) => {
    if ((inFlight.get(session) ?? 0) >= (o.delegations?.inFlightPerSession ?? 0)) return;
    if (performance.now() - (lastTypedAt.get(session) ?? 0) < 850 + Math.random() * 200) return;
    lastTypedAt.set(session, performance.now());
    host.handleFrame({ kind: 'text', session, itemId: `t${typed}`, text: REQUESTS[typed++ % REQUESTS.length]! });
  };
  const typing = o.delegations ? setInterval(() => ids.forEach(maybeType), 250) : null;
  const inFlightSamples: number[] = [];
  const sampler = setInterval(() => {
    let sum = 0;
    for (const s of ids) sum += inFlight.get(s) ?? 0;
    inFlightSamples.push(sum / ids.length);
  }, 1000);

  await new Promise((r) => setTimeout(r, o.warmupS * 1000));
  host.stepStats.reset();
  const submittedBefore = submitted;
  inFlightSamples.length = 0;
  await new Promise((r) => setTimeout(r, o.measureS * 1000));
  const rssAfter = process.memoryUsage().rss;
  const stats = host.stepStats;
  const result: ForegroundLoadResult = {
    sessions: o.sessions,
    steps: stats.steps,
    stepP50Ms: stats.percentile(50),
    stepP99Ms: stats.percentile(99),
    missed: stats.missed,
    missRate: stats.missed / Math.max(1, stats.steps + stats.missed),
    rssPerSessionMb: (rssAfter - rssBefore) / o.sessions / 1024 / 1024,
    delegationsSubmitted: submitted - submittedBefore,
    meanInFlightPerSession: inFlightSamples.length
      ? inFlightSamples.reduce((a, b) => a + b, 0) / inFlightSamples.length
      : 0,
  };
  clearInterval(mic);
  if (typing) clearInterval(typing);
  clearInterval(sampler);
  await host.close();
  await executor.close();
  await store.close();
  return result;
}
