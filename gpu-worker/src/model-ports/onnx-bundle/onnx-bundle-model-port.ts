import type { ModelCapabilities, ModelPort, OpenSessionRequest } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { LinkPool } from '../../reference-model/link-pool.ts';
import { PortSessions } from '../../reference-model/port-sessions.ts';
import type { ReferenceModelSession, SessionOwner } from '../../reference-model/reference-model-session.ts';
import { startWorker, WorkerLink } from '../../reference-model/worker-link.ts';
import type { MainToInference } from '../../reference-model/worker-protocol.ts';
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
export class OnnxBundleModelPort implements ModelPort, SessionOwner {
  private readonly sessions = new PortSessions();
  private isClosed = false;

  private constructor(
    readonly bundle: LoadedBundle,
    private readonly pool: LinkPool<MainToInference>,
    readonly calibration: OnnxBundleCalibration,
  ) {}

  static async create(options: OnnxBundleOptions): Promise<OnnxBundleModelPort> {
    const bundle = await loadBundle(options.bundleDir);
    const threads = Math.max(1, Math.floor(options.threads ?? 1));
    const ready: BundleWorkerReady[] = [];
    const pool = await LinkPool.start<MainToInference>(threads, async (i) => {
      const data: BundleWorkerData = {
        bundleDir: bundle.dir,
        provider: {
          executionProvider: options.executionProvider ?? 'cpu',
          ...(options.intraOpThreads ? { intraOpThreads: options.intraOpThreads } : {}),
          ...(options.deviceId !== undefined ? { deviceId: options.deviceId } : {}),
        },
        // Replacements of crashed threads skip calibration: capacity was set at startup.
        calibrate: ready[i] === undefined,
      };
      const started = await startWorker<BundleWorkerReady>(new URL('./bundle-worker.ts', import.meta.url), data);
      ready[i] ??= started.ready;
      return new WorkerLink<MainToInference>(started.worker);
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

  get closed(): boolean {
    return this.isClosed;
  }

  /** Threads replaced after a crash so far. */
  get restarts(): number {
    return this.pool.restarts;
  }

  async capabilities(): Promise<ModelCapabilities> {
    const { manifest } = this.bundle;
    return {
      model: manifest.name,
      modelRevision: manifest.revision,
      specialTokens: { ...manifest.specialTokens },
      maxSessions: this.calibration.maxSessions,
      audioInput: manifest.components.audio_encoder !== undefined,
      videoInput: false,
      textInput: true,
      nativeAudioOutput: manifest.components.speech_head !== undefined,
      inputSampleRateHz: 16_000,
      outputSampleRateHz: 24_000,
    };
  }

  async openSession(request: OpenSessionRequest): Promise<ReferenceModelSession> {
    if (this.isClosed) throw new VenusError('model_unavailable', 'the ONNX bundle port is closed');
    const open = this.pool.alive.reduce((n, l) => n + l.sessions, 0);
    const capacity = { maxSessions: this.calibration.maxSessions, open, name: 'the bundle' };
    return this.sessions.open(request, capacity, this, async (handle) => {
      const link = await this.pool.pick();
      await link.call({
        t: 'open',
        id: link.nextId(),
        handle,
        sessionId: request.sessionId,
        incarnation: request.incarnation,
      });
      return link;
    });
  }

  released(session: ReferenceModelSession): void {
    this.sessions.released(session);
  }

  /** Test hook: thread `thread` exits at once with code 1, as a native crash would. */
  crashForTest(thread = 0): void {
    const link = this.pool.link(thread);
    if (!link?.alive) throw new VenusError('model_unavailable', `bundle thread ${thread} is not running`);
    link.send({ t: 'crash' });
  }

  /** Resolves once no crashed thread is still being replaced. */
  recovered(): Promise<void> {
    return this.pool.settled();
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.pool.close();
    this.sessions.clear();
  }
}
