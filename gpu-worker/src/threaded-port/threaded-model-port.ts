import {
  type ContextRole,
  ContextRoleSchema,
  type ModelCapabilities,
  type ModelPort,
  type OpenSessionRequest,
  VenusError,
} from '@venus/protocol';
import { LinkPool, type StartLink } from './link-pool.ts';
import { PortSessions } from './port-sessions.ts';
import type { OpenMessage, SessionThreadMessage } from './thread-protocol.ts';
import type { SessionOwner, ThreadSessionHandle } from './thread-session-handle.ts';

/** The threads of a threaded port, `O` being its `open` message. */
export type SessionThreadPool<O extends OpenMessage> = LinkPool<SessionThreadMessage<O>>;

/**
 * Capabilities of a threaded model: audio and text in, its own speech out, no video, the port's
 * sample rates; `model` fills in the rest and overrides any of these.
 */
export function threadedCapabilities(
  model: Pick<ModelCapabilities, 'model' | 'modelRevision' | 'specialTokens' | 'maxSessions'> &
    Partial<ModelCapabilities>,
): ModelCapabilities {
  return {
    audioInput: true,
    videoInput: false,
    textInput: true,
    // Steps carry speech: the host needs no synthesiser of its own.
    nativeAudioOutput: true,
    inputSampleRateHz: 16_000,
    outputSampleRateHz: 24_000,
    ...model,
  };
}

/** How a threaded port names its model in errors and sizes itself. */
export interface ThreadedPortSetup {
  /** e.g. "the cascade model" */
  modelName: string;
  maxSessions: number;
  /** Roles of restored history its sessions take into their context. Default: all of them. */
  historyRoles?: readonly ContextRole[];
  /** Its sessions take one-shot instructions for their next response. Default false. */
  takesResponseInstructions?: boolean;
  /** Its sessions hear between chunk steps (`ModelSession.perceptionTickMs`). Default: they do not. */
  perceptionTickMs?: number;
}

/**
 * The one port for every model whose sessions live in worker threads (the reference model, the
 * cascade, the ONNX bundle): capacity checked before a thread is asked, sessions spread over a
 * LinkPool of threads, a crashed thread replaced in its slot (its sessions fail with
 * `model_unavailable` until their hosts reopen them), incarnation fencing through PortSessions, and
 * a bounded close. A model adds its capabilities and the fields of its `open` message.
 *
 * @example
 *   class MyPort extends ThreadedModelPort<MyOpen> {
 *     static async create() {
 *       const pool = await ThreadedModelPort.startPool(2, (i, replacement) => startMyThread(replacement));
 *       return new MyPort(pool, { modelName: 'my model', maxSessions: 32 });
 *     }
 *     async capabilities() { return { ... }; }
 *   }
 */
export abstract class ThreadedModelPort<O extends OpenMessage = OpenMessage> implements ModelPort, SessionOwner {
  readonly modelName: string;
  readonly historyRoles: ReadonlySet<ContextRole>;
  readonly takesResponseInstructions: boolean;
  readonly perceptionTickMs: number | undefined;
  private readonly sessions = new PortSessions();
  private isClosed = false;

  protected constructor(
    private readonly pool: SessionThreadPool<O>,
    private readonly setup: ThreadedPortSetup,
  ) {
    this.modelName = setup.modelName;
    this.historyRoles = new Set(setup.historyRoles ?? ContextRoleSchema.options);
    this.takesResponseInstructions = setup.takesResponseInstructions ?? false;
    this.perceptionTickMs = setup.perceptionTickMs;
  }

  /**
   * Starts `count` threads through `start`; a replacement after a crash is started the same way with
   * `replacement` true (replacements skip calibration: the capacity was set at startup).
   */
  protected static startPool<O extends OpenMessage>(
    count: number,
    start: (index: number, replacement: boolean) => ReturnType<StartLink<SessionThreadMessage<O>>>,
  ): Promise<SessionThreadPool<O>> {
    const started = new Set<number>();
    return LinkPool.start<SessionThreadMessage<O>>(Math.max(1, Math.floor(count)), async (i) => {
      const link = await start(i, started.has(i));
      started.add(i);
      return link;
    });
  }

  abstract capabilities(): Promise<ModelCapabilities>;

  /** The fields of this model's `open` message beyond the session and incarnation. */
  protected abstract openFields(request: OpenSessionRequest): Omit<O, keyof OpenMessage>;

  get closed(): boolean {
    return this.isClosed;
  }

  /** Threads replaced after a crash so far. */
  get restarts(): number {
    return this.pool.restarts;
  }

  /** Test hook: thread `thread` exits at once with code 1, as a native crash would. */
  crashForTest(thread = 0): void {
    const link = this.pool.link(thread);
    if (!link?.alive) throw new VenusError('model_unavailable', `${this.modelName} thread ${thread} is not running`);
    link.send({ t: 'crash' });
  }

  /** Resolves once no crashed thread is still being replaced. */
  recovered(): Promise<void> {
    return this.pool.settled();
  }

  async openSession(request: OpenSessionRequest): Promise<ThreadSessionHandle> {
    if (this.isClosed) throw new VenusError('model_unavailable', `${this.modelName} port is closed`);
    const open = this.pool.alive.reduce((n, l) => n + l.sessions, 0);
    const capacity = { maxSessions: this.setup.maxSessions, open, name: this.modelName };
    return this.sessions.open(request, capacity, this, async (handle) => {
      const link = await this.pool.pick();
      const message = {
        t: 'open',
        id: link.nextId(),
        handle,
        sessionId: request.sessionId,
        incarnation: request.incarnation,
        ...this.openFields(request),
      } as Extract<SessionThreadMessage<O>, { id: number }>;
      await link.call(message);
      return link;
    });
  }

  released(session: ThreadSessionHandle): void {
    this.sessions.released(session);
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.pool.close();
    this.sessions.clear();
    await this.afterClose();
  }

  /** What the model frees after its session threads ended (e.g. the reference model's TTS threads). */
  protected async afterClose(): Promise<void> {}
}
