import { MessageChannel, type Worker } from 'node:worker_threads';
import type { ModelCapabilities, OpenSessionRequest, RecogniserGrammar } from '@venus/protocol';
import { DEMO_GRAMMAR } from '../perception/pocketsphinx/demo-vocabulary.ts';
import { grammarWithFunctions, type SpokenFunction } from '../perception/pocketsphinx/grammar-from-vocabulary.ts';
import type { OpenMessage } from '../threaded-port/thread-protocol.ts';
import {
  type SessionThreadPool,
  ThreadedModelPort,
  threadedCapabilities,
} from '../threaded-port/threaded-model-port.ts';
import { startWorker, WorkerLink } from '../threaded-port/worker-link.ts';
import { TEXT_SPECIAL_TOKENS } from './special-tokens.ts';
import type {
  InferenceToMain,
  InferenceWorkerData,
  MainToInference,
  ReferenceOpen,
  TtsControl,
  TtsToMain,
  TtsWorkerData,
} from './worker-protocol.ts';

export interface ReferenceModelOptions {
  /** Threads that host sessions (dialogue state, VAD); sessions are assigned round-robin. Default 1. */
  inferenceThreads?: number;
  /** Threads that synthesise speech. Default 1. */
  ttsThreads?: number;
  /** A fixed capacity instead of the calibrated one, e.g. for benchmarks that probe past it. */
  maxSessions?: number;
  /**
   * Hearing words (PocketSphinx, default on): the functions whose examples and keywords extend
   * what can be said, the base grammar (default the demo domain), and the recogniser streams one
   * inference thread holds at once (default 32, ~10 MB each; sessions past it go without words).
   * `false`: no recognition, content only from typed text or a client's transcript.
   */
  recognition?: false | { functions?: readonly SpokenFunction[]; grammar?: RecogniserGrammar; maxStreams?: number };
  /**
   * How often (ms) the host lets a session hear between chunk steps while the assistant speaks
   * (`listenOnly` steps), so a user taking the floor stops it within ~this much of the decision
   * whatever the chunk size. 0 turns it off. Default 40 (`VENUS_PERCEPTION_TICK_MS` in a worker's settings).
   */
  perceptionTickMs?: number;
}

/**
 * The default perception tick. The head's decision points are 80 ms apart in audio time, but a tick
 * is not aligned with them: at 80 ms a decision point's audio waited 40 ms on average (up to 80) for
 * the next tick. Measured on the same 10 interruption dialogues at 1000 ms chunks (audio only,
 * held-out voices, same code otherwise): stop latency p50 0.41 s at 80 ms, 0.36 s at 40 ms; the
 * perception bench resolved no change in CPU per session (47.3 against 47.5 ms/s at 16 sessions).
 * `npm run train:e2e` with it: README, "Audio only: the headline".
 */
export const DEFAULT_PERCEPTION_TICK_MS = 40;

/** What the port measured at startup, and the capacity it derived from it. */
export interface ReferenceModelCalibration {
  /** Unbatched cost of one session-step at 160 ms chunks on an inference thread (ms). */
  stepCostMs: number;
  /** Time to synthesise a typical sentence on a TTS thread (ms). */
  synthMs: number;
  maxSessions: number;
}

export const REFERENCE_MODEL_REVISION = 'reference-v1';
/** Capacity keeps half of each thread free: for bursts, GC and the other work of the process. */
const HEADROOM = 0.5;
const CALIBRATION_CHUNK_MS = 160;
/** Assumed speaking rate for the TTS bound: one utterance per session every this many ms. */
const UTTERANCE_INTERVAL_MS = 8000;
const MAX_SESSIONS_CAP = 256;

/**
 * The reference model behind the model port: real Silero VAD (onnxruntime-node) for voice
 * activity and barge-in, PocketSphinx (WebAssembly, one recogniser thread per inference thread) for
 * the words of what the user says, eSpeak NG for speech, and a narrow, rule-based dialogue (weather, world
 * time, calculations via hidden delegate spans; backchannel / discard / repair / park on overlap).
 * Nothing runs on the caller's event loop: sessions live in inference worker threads, speech in
 * TTS worker threads that talk to the inference threads directly. `maxSessions` is derived from
 * the step and synthesis costs measured at startup.
 *
 * @example
 *   const port = await ReferenceModelPort.create({ inferenceThreads: 1, ttsThreads: 1 });
 *   const s = await port.openSession({ sessionId: 's1', incarnation: 0 });
 *   await s.appendText({ inputSeq: 1, itemId: 'i1', text: "what's the weather in Paris" });
 *   const out = await s.step({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   await port.close();
 */
export class ReferenceModelPort extends ThreadedModelPort<ReferenceOpen> {
  private constructor(
    pool: SessionThreadPool<ReferenceOpen>,
    private readonly ttsWorkers: Worker[],
    readonly calibration: ReferenceModelCalibration,
    perceptionTickMs: number,
  ) {
    super(pool, {
      modelName: 'the reference model',
      maxSessions: calibration.maxSessions,
      ...(perceptionTickMs > 0 ? { perceptionTickMs } : {}),
    });
  }

  static async create(options: ReferenceModelOptions = {}): Promise<ReferenceModelPort> {
    const perceptionTickMs = options.perceptionTickMs ?? DEFAULT_PERCEPTION_TICK_MS;
    const inferenceThreads = Math.max(1, Math.floor(options.inferenceThreads ?? 1));
    const ttsThreads = Math.max(1, Math.floor(options.ttsThreads ?? 1));
    const ttsStarts = Array.from({ length: ttsThreads }, () => {
      const data: TtsWorkerData = { ports: [] };
      return startWorker<TtsToMain>(new URL('./tts-worker.ts', import.meta.url), data);
    });
    const ttsStarted = await Promise.allSettled(ttsStarts);
    const tts = ttsStarted.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const ttsFailed = ttsStarted.find((s) => s.status === 'rejected');
    if (ttsFailed) {
      await Promise.all(tts.map((t) => t.worker.terminate()));
      throw ttsFailed.reason;
    }
    const ttsWorkers = tts.map((t) => t.worker);
    const r = options.recognition ?? {};
    const recognition =
      r === false
        ? undefined
        : {
            grammar: grammarWithFunctions(r.functions ?? [], r.grammar ?? DEMO_GRAMMAR),
            maxStreams: r.maxStreams ?? 32,
          };
    const stepCosts: number[] = [];
    let pool: SessionThreadPool<ReferenceOpen>;
    try {
      pool = await ThreadedModelPort.startPool(inferenceThreads, async (i, replacement) => {
        const started = await startInferenceThread(ttsWorkers, !replacement, recognition);
        stepCosts[i] ??= started.stepCostMs;
        return started.link;
      });
    } catch (err) {
      await Promise.all(ttsWorkers.map((w) => w.terminate()));
      throw err;
    }
    const stepCostMs = Math.max(...stepCosts);
    const synthMs = Math.max(...tts.map((t) => t.ready.synthMs));
    const perInferenceThread = Math.floor((HEADROOM * CALIBRATION_CHUNK_MS) / Math.max(stepCostMs, 0.01));
    const perTtsThread = Math.floor((HEADROOM * UTTERANCE_INTERVAL_MS) / Math.max(synthMs, 1));
    const maxSessions =
      options.maxSessions ??
      Math.max(1, Math.min(MAX_SESSIONS_CAP, perInferenceThread * inferenceThreads, perTtsThread * ttsThreads));
    return new ReferenceModelPort(pool, ttsWorkers, { stepCostMs, synthMs, maxSessions }, perceptionTickMs);
  }

  async capabilities(): Promise<ModelCapabilities> {
    return threadedCapabilities({
      model: 'venus-reference',
      modelRevision: REFERENCE_MODEL_REVISION,
      specialTokens: { ...TEXT_SPECIAL_TOKENS },
      maxSessions: this.calibration.maxSessions,
    });
  }

  protected openFields(request: OpenSessionRequest): Omit<ReferenceOpen, keyof OpenMessage> {
    return {
      ...(request.voice ? { voice: request.voice } : {}),
      ...(request.phrases?.length ? { phrases: request.phrases } : {}),
      ...(request.history?.length ? { history: request.history } : {}),
      ...(request.parked ? { parked: request.parked } : {}),
    };
  }

  protected override async afterClose(): Promise<void> {
    await Promise.all(this.ttsWorkers.map((w) => w.terminate()));
  }
}

/** Starts one inference thread with a fresh message channel to every TTS thread. */
async function startInferenceThread(
  ttsWorkers: readonly Worker[],
  calibrate: boolean,
  recognition: InferenceWorkerData['recognition'],
): Promise<{ link: WorkerLink<MainToInference>; stepCostMs: number }> {
  const ttsPorts = ttsWorkers.map((w) => {
    const channel = new MessageChannel();
    const attach: TtsControl = { t: 'port', port: channel.port2 };
    w.postMessage(attach, [channel.port2]);
    return channel.port1;
  });
  const data: InferenceWorkerData = { ttsPorts, maxBatch: 64, calibrate, ...(recognition ? { recognition } : {}) };
  const started = await startWorker<InferenceToMain>(new URL('./inference-worker.ts', import.meta.url), data, ttsPorts);
  const stepCostMs = started.ready.t === 'ready' ? started.ready.stepCostMs : Number.NaN;
  return { link: new WorkerLink<MainToInference>(started.worker), stepCostMs };
}
