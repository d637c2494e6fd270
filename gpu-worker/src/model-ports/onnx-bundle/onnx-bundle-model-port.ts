import type { ModelCapabilities } from '@venus/protocol';
import type { OpenMessage } from '../../threaded-port/thread-protocol.ts';
import {
  type SessionThreadPool,
  ThreadedModelPort,
  threadedCapabilities,
} from '../../threaded-port/threaded-model-port.ts';
import { startWorker, WorkerLink } from '../../threaded-port/worker-link.ts';
import { type LoadedBundle, loadBundle } from './bundle-manifest.ts';
import type { BundleWorkerData, BundleWorkerReady } from './bundle-worker.ts';
import type { ExecutionProvider } from './execution-provider.ts';

export interface OnnxBundleOptions {
  /** Directory holding `bundle.json` and the files it names. */
  bundleDir: string;
  /** Worker threads that host sessions (round-robin); each loads the bundle once. Default 1. */
  threads?: number;
  /** Chosen once at start; see execution-provider.ts for installing CUDA on a GPU node. Default `cpu`. */
  executionProvider?: ExecutionProvider;
  /** Intra-op threads per graph (CPU). Default 1. */
  intraOpThreads?: number;
  /** GPU ordinal for `cuda`. */
  deviceId?: number;
  /** Upper bound on the advertised capacity, whatever calibration measured. Default 256. */
  maxSessionsCap?: number;
}

/** What the port measured at startup, and the capacity it derived. */
export interface OnnxBundleCalibration {
  /** One session-step at 160 ms chunks, batched with `calibrationSessions` others (ms). */
  stepCostMs: number;
  calibrationSessions: number;
  maxSessions: number;
}

/** Capacity keeps half of each thread free for bursts, GC and the rest of the process. */
const HEADROOM = 0.5;
const CHUNK_MS = 160;

/**
 * ModelPort over an ONNX bundle (`bundle.json` + ONNX graphs + tokenizer): an audio encoder, a
 * causal LM decoder with a KV cache, an optional speech head. Sessions live in worker threads;
 * each thread batches the steps of its sessions through the decoder, greedily decoding a bounded
 * number of tokens per chunk. `<backend>` prefills are tokens appended to the same KV cache.
 * Capacity comes from the batched step cost measured at start. A crashed thread is replaced; its
 * sessions fail with `model_unavailable` until their host reopens them with a new incarnation.
 *
 * @example
 *   const port = await OnnxBundleModelPort.create({ bundleDir: 'gpu-worker/models/tiny-bundle' });
 *   const s = await port.openSession({ sessionId: 's1', incarnation: 0 });
 *   await s.appendAudio({ inputSeq: 1, pcm16k });
 *   const out = await s.step({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 */
export class OnnxBundleModelPort extends ThreadedModelPort {
  private constructor(
    readonly bundle: LoadedBundle,
    pool: SessionThreadPool<OpenMessage>,
    readonly calibration: OnnxBundleCalibration,
  ) {
    super(pool, { modelName: 'the ONNX bundle', maxSessions: calibration.maxSessions, historyRoles: ['backend'] });
  }

  static async create(options: OnnxBundleOptions): Promise<OnnxBundleModelPort> {
    const bundle = await loadBundle(options.bundleDir);
    const threads = Math.max(1, Math.floor(options.threads ?? 1));
    const ready: BundleWorkerReady[] = [];
    const pool = await ThreadedModelPort.startPool(threads, async (i, replacement) => {
      const data: BundleWorkerData = {
        bundleDir: bundle.dir,
        provider: {
          executionProvider: options.executionProvider ?? 'cpu',
          ...(options.intraOpThreads ? { intraOpThreads: options.intraOpThreads } : {}),
          ...(options.deviceId !== undefined ? { deviceId: options.deviceId } : {}),
        },
        calibrate: !replacement,
      };
      const started = await startWorker<BundleWorkerReady>(new URL('./bundle-worker.ts', import.meta.url), data);
      ready[i] ??= started.ready;
      return new WorkerLink(started.worker);
    });
    const stepCostMs = Math.max(...ready.map((r) => r.stepCostMs));
    const perThread = Math.floor((HEADROOM * CHUNK_MS) / Math.max(stepCostMs, 0.01));
    const maxSessions = Math.max(1, Math.min(options.maxSessionsCap ?? 256, perThread * threads));
    return new OnnxBundleModelPort(bundle, pool, {
      stepCostMs,
      calibrationSessions: ready[0]?.calibrationSessions ?? 0,
      maxSessions,
    });
  }

  async capabilities(): Promise<ModelCapabilities> {
    const { manifest } = this.bundle;
    return threadedCapabilities({
      model: manifest.name,
      modelRevision: manifest.revision,
      specialTokens: { ...manifest.specialTokens },
      maxSessions: this.calibration.maxSessions,
      audioInput: manifest.components.audio_encoder !== undefined,
      nativeAudioOutput: manifest.components.speech_head !== undefined,
    });
  }

  protected openFields(): Record<never, never> {
    return {};
  }
}
