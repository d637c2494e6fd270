import { existsSync } from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
import { serveDuplexDialogues } from '../gpu-worker/src/duplex-dialogue/serve-duplex-dialogues.ts';
import { OnnxOverlapHead } from '../gpu-worker/src/perception/overlap-head.ts';
import type { Interruption } from '../gpu-worker/src/perception/overlap-policy.ts';
import { DEMO_GRAMMAR } from '../gpu-worker/src/perception/pocketsphinx/demo-vocabulary.ts';
import { SileroVad } from '../gpu-worker/src/perception/silero-vad.ts';
import { DialogueSession } from '../gpu-worker/src/reference-model/dialogue-session.ts';
import { resamplePcm16 } from '../gpu-worker/src/reference-model/resample.ts';
import { CpuMeter, ownMethods } from './support/cpu-meter.ts';
import { cpuMsSince, InlineRecogniser, type InlineRecogniserStream } from './support/inline-recogniser.ts';
import { mixInto, type PerceptionSpeech, perceptionSpeech, roomNoise, summary } from './support/perception-speech.ts';

/** Where the speech embedding lives once it is part of the worker's perception. */
export const SPEECH_EMBEDDING_MODULE = new URL('../gpu-worker/src/perception/speech-embedding.ts', import.meta.url);

export interface PerceptionCostOptions {
  /** Sessions run one after another, each: a request, the assistant's answer, one overlap (classes in turn). */
  sessions: number;
  /** Step size, ms. Default 160. */
  chunkMs?: number;
  /** Speech to use (built with eSpeak NG when not given). */
  speech?: PerceptionSpeech;
}

/** CPU ms per second of audio of one component: over every step, its median, p99 and mean (total / audio). */
export interface ComponentCost {
  p50: number;
  p99: number;
  mean: number;
  /** Mean over the steps in which the user spoke over the assistant. */
  overlapMean: number;
}

export interface PerceptionCostResult {
  chunkMs: number;
  sessions: number;
  steps: number;
  audioS: number;
  /** Steps in which the user spoke over the assistant, and the head's batches run in them. */
  overlapSteps: number;
  headRuns: number;
  /** Whether these ran at all: absent ones cost nothing and are said so. */
  /**
   * Whether these ran: the head; the speech embedding in the worker's own step, or beside it (the
   * module is there but the worker runs it only with a head that takes its features, so the bench
   * runs it as the worker would: every session's audio into its stream, embeddings of the 80 ms
   * hops of overlapping speech), or not at all.
   */
  present: { head: boolean; embedding: EmbeddingMode };
  cost: {
    recogniser: ComponentCost;
    vad: ComponentCost;
    head: ComponentCost;
    embedding: ComponentCost;
    /** The rest of a step: voice activity, features, dialogue rules. */
    rest: ComponentCost;
    total: ComponentCost;
  };
  /** The first overlap verdict of each session, with the class the overlap was made as. */
  verdicts: Array<{ cls: string; verdict: Interruption | null; afterOnsetMs: number | null }>;
}

const ECHO_GAIN = 0.03; // the assistant's voice leaking into the microphone, about -30 dB
const REQUEST_AT_MS = 300;
const OVERLAP_AFTER_SPEAKING_MS = 800;
const TAIL_MS = 2000;
const MAX_SESSION_MS = 25_000;

/**
 * Perception cost per session, measured on the worker's own step (`serveDuplexDialogues`: Silero
 * VAD, voice activity, overlap features and the trained head, and the speech embedding when the
 * worker has it) with real eSpeak NG speech: each session makes a request, the assistant answers
 * (its voice leaks into the microphone at about -30 dB), and the user speaks over the answer (an
 * interruption, a backchannel, speech to someone else or background speech, in turn), so the head
 * runs. The recogniser is the same PocketSphinx wasm decoder run on this thread so its share can be
 * timed per step. Sessions run one at a time as fast as they go (no batching across sessions: the
 * upper bound of a session's cost). Each component's CPU time is read around its own calls; the
 * figures are CPU ms per second of audio.
 *
 * @example
 *   const r = await runPerceptionCost({ sessions: 8 });
 *   console.log(r.cost.total.mean, r.present.embedding);
 */
export async function runPerceptionCost(options: PerceptionCostOptions): Promise<PerceptionCostResult> {
  const chunkMs = options.chunkMs ?? 160;
  const chunkSamples = chunkMs * 16;
  const speech = options.speech ?? perceptionSpeech();
  const recogniser = await InlineRecogniser.load();
  const streams: InlineRecogniserStream[] = [];
  const decodeMs = () => streams.reduce((n, s) => n + s.decodeMs, 0);

  const vad = new CpuMeter().wrap(SileroVad.prototype, 'runBatch');
  const head = new CpuMeter().wrap(OnnxOverlapHead.prototype, 'flush');
  const embedding = new CpuMeter();
  const embeddingModule = await meterEmbedding(embedding);
  const workerHead = await OnnxOverlapHead.load();
  await workerHead?.close();
  const embeddingMode: EmbeddingMode =
    embeddingModule === null ? 'absent' : workerHead ? 'in the step' : 'beside the step';
  const beside =
    embeddingMode === 'beside the step' ? await embeddingModule!.SpeechEmbedding.create({ maxBatch: 8 }) : null;

  const channel = new MessageChannel();
  const step = await serveDuplexDialogues<DialogueSession, never>(channel.port1, 64, () => {
    throw new Error('the perception bench opens its sessions itself');
  });

  const samples = {
    recogniser: [] as number[],
    vad: [] as number[],
    head: [] as number[],
    embedding: [] as number[],
    rest: [] as number[],
    total: [] as number[],
  };
  const overlapIdx: number[] = [];
  const verdicts: PerceptionCostResult['verdicts'] = [];
  let headRuns = 0;
  try {
    for (let s = 0; s < options.sessions; s++) {
      const request = speech.requests[s % speech.requests.length]!;
      const overlap = speech.overlaps[s % speech.overlaps.length]!;
      const d = new DialogueSession({
        sessionId: `perception-${s}`,
        incarnation: 0,
        synthesize: async () => speech.assistant24k,
        recognise: async () => {
          const stream = recogniser.open(DEMO_GRAMMAR);
          streams.push(stream);
          return stream;
        },
      });
      let seq = 0;
      const hearing = beside ? new embeddingModule!.EmbeddingStream() : null;
      let nextHop = 0;
      let echo: Int16Array = new Int16Array(0);
      let speaking = false;
      let overlapAt: number | null = null;
      let verdict: PerceptionCostResult['verdicts'][number] | null = null;
      for (let k = 0; k * chunkMs < MAX_SESSION_MS; k++) {
        const t = k * chunkMs;
        if (overlapAt !== null && t > overlapAt + overlap.pcm.length / 16 + TAIL_MS) break;
        const pcm = roomNoise(chunkSamples, s * 100_003 + k);
        mixInto(pcm, request, ((REQUEST_AT_MS - t) * chunkSamples) / chunkMs);
        if (overlapAt !== null) mixInto(pcm, overlap.pcm, ((overlapAt - t) * chunkSamples) / chunkMs);
        mixInto(pcm, echo, 0, ECHO_GAIN);
        d.appendAudio(++seq, pcm);
        const overlapping =
          overlapAt !== null && speaking && t + chunkMs > overlapAt && t < overlapAt + overlap.pcm.length / 16;
        const runsBefore = head.calls;
        const rec0 = decodeMs();
        const cpu0 = process.cpuUsage();
        const out = await step(d, {
          chunk: k,
          inputSeqCutoff: seq,
          atMs: t + chunkMs,
          assistantAudible: speaking,
        });
        // Recogniser events reach the session on the next turns of the event loop, as they do in the worker.
        await new Promise((r) => setImmediate(r));
        if (beside && hearing) {
          hearing.push(Float32Array.from(pcm, (x) => x / 32768));
          const latest = hearing.latestHop();
          if (overlapping) {
            const hops: number[] = [];
            for (let hop = Math.max(nextHop, 0); hop <= latest; hop++) if (hearing.has(hop)) hops.push(hop);
            if (hops.length > 0) await beside.embed([{ stream: hearing, hops }]);
          }
          nextHop = latest + 1;
        }
        const total = cpuMsSince(cpu0);
        const rec = decodeMs() - rec0;
        const v = vad.take();
        const h = head.take();
        const e = embedding.take();
        const perS = 1000 / chunkMs;
        samples.total.push(total * perS);
        samples.recogniser.push(rec * perS);
        samples.vad.push(v * perS);
        samples.head.push(h * perS);
        samples.embedding.push(e * perS);
        samples.rest.push(Math.max(0, total - rec - v - h - e) * perS);
        if (overlapping) overlapIdx.push(samples.total.length - 1);
        headRuns += head.calls - runsBefore;
        echo = out.audio ? resamplePcm16(out.audio, 24_000, 16_000) : new Int16Array(0);
        if (out.audio && overlapAt === null) overlapAt = t + OVERLAP_AFTER_SPEAKING_MS;
        speaking = out.audio !== undefined;
        if (!verdict && overlapAt !== null && out.interruption && t + chunkMs > overlapAt) {
          verdict = { cls: overlap.cls, verdict: out.interruption, afterOnsetMs: t + chunkMs - overlapAt };
        }
      }
      verdicts.push(verdict ?? { cls: overlap.cls, verdict: null, afterOnsetMs: null });
      d.close();
    }
  } finally {
    vad.restore();
    head.restore();
    embedding.restore();
    await beside?.close();
    await shutdown(channel);
    for (const stream of streams) await stream.close();
  }
  const cost = (values: number[]): ComponentCost => ({
    ...summary(values),
    overlapMean: summary(overlapIdx.map((i) => values[i]!)).mean,
  });
  return {
    chunkMs,
    sessions: options.sessions,
    steps: samples.total.length,
    audioS: (samples.total.length * chunkMs) / 1000,
    overlapSteps: overlapIdx.length,
    headRuns,
    present: {
      head: workerHead !== null,
      embedding: embeddingMode,
    },
    cost: {
      recogniser: cost(samples.recogniser),
      vad: cost(samples.vad),
      head: cost(samples.head),
      embedding: cost(samples.embedding),
      rest: cost(samples.rest),
      total: cost(samples.total),
    },
    verdicts,
  };
}

export type EmbeddingMode = 'in the step' | 'beside the step' | 'absent';

/** What the bench uses of the speech embedding module (the rest of its API is free to change). */
interface EmbeddingModule {
  SpeechEmbedding: {
    create(options: { maxBatch?: number }): Promise<{
      embed(requests: Array<{ stream: EmbeddingStreamLike; hops: number[] }>): Promise<unknown>;
      close(): Promise<void>;
    }>;
  };
  EmbeddingStream: new () => EmbeddingStreamLike;
}
interface EmbeddingStreamLike {
  push(x: Float32Array): void;
  latestHop(): number;
  has(hop: number): boolean;
}

/**
 * Meters every method of every class the speech embedding module exports, when the module exists:
 * whatever the worker's step (or the bench beside it) calls of it is counted.
 */
async function meterEmbedding(meter: CpuMeter): Promise<EmbeddingModule | null> {
  if (!existsSync(SPEECH_EMBEDDING_MODULE)) return null;
  const mod = (await import(SPEECH_EMBEDDING_MODULE.href)) as Record<string, unknown>;
  for (const value of Object.values(mod)) {
    if (typeof value !== 'function' || typeof value.prototype !== 'object' || value.prototype === null) continue;
    for (const name of ownMethods(value.prototype)) if (name !== 'close') meter.wrap(value.prototype, name);
  }
  return mod as unknown as EmbeddingModule;
}

/** Closes the step's sessions and releases its models, as the worker does at shutdown. */
async function shutdown(channel: MessageChannel): Promise<void> {
  const replied = new Promise<void>((resolve) => channel.port2.once('message', () => resolve()));
  channel.port2.postMessage({ t: 'shutdown', id: 1 });
  await Promise.race([replied, new Promise((r) => setTimeout(r, 5000))]);
  channel.port1.close();
  channel.port2.close();
}
