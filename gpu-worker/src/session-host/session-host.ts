import {
  createLogger,
  type DelegationExecutor,
  type EdgeToWorkerFrame,
  EdgeToWorkerFrameSchema,
  HANDOVER_REASON,
  type InputAudioBudget,
  type MediaStore,
  type ModelPort,
  type TimelineEvent,
  type TimelineStore,
  toVenusError,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { MemoryMediaStore } from '../media/memory-media-store.ts';
import { readRecentAudio } from './recent-audio.ts';
import { SessionRuntime } from './session-runtime.ts';
import { StepStats } from './step-stats.ts';
import { replayTimeline } from './timeline-replay.ts';

const log = createLogger('gpu-worker.session-host');

export interface SessionHostOptions {
  model: ModelPort;
  executor: DelegationExecutor;
  store: TimelineStore;
  /** Where audio samples live (the timeline refers to them). Default: an in-memory ring per session. */
  media?: MediaStore;
  now?: () => number;
  /** Step sessions on timers (default true); tests may drive `boundary()` by hand. */
  autoStep?: boolean;
  /**
   * Each session's input-audio budget on this worker. Default `workerInputAudioBudget()` of the
   * edge's default (1.25x real time, 20 s burst); a worker behind edges with a larger budget takes
   * `workerInputAudioBudget(thatBudget)`.
   */
  inputAudio?: InputAudioBudget;
  /**
   * What a tenant's users may say beyond the model's own domain: its deployed functions' examples
   * and keywords, asked once per session open (a failure or a slow catalog costs the session only
   * those words). At most MAX_SPOKEN_PHRASES are passed on.
   */
  spokenPhrases?: (tenant: string) => Promise<readonly string[]>;
}

/** Utterances of earlier incarnations a resumed session remembers (acknowledgements still under way). */
const EARLIER_UTTERANCES = 32;

function latestUtterances(events: readonly TimelineEvent[]): Set<string> {
  const ids = new Set<string>();
  for (let i = events.length - 1; i >= 0 && ids.size < EARLIER_UTTERANCES; i--) {
    const e = events[i]!;
    if (e.type === 'assistant.utterance') ids.add(e.data.utteranceId);
  }
  return ids;
}

/** Phrases a session's recogniser grammar takes from its tenant's functions: bounds the grammar's size and cost. */
const MAX_SPOKEN_PHRASES = 400;

/**
 * The GPU worker's session host: receives relay frames from the edge, runs one `SessionRuntime`
 * per session on the model port, and publishes timeline frames back. Frames that arrive while a
 * session is still opening are queued, so nothing accepted is lost.
 *
 * @example
 *   const host = new SessionHost({ model, executor, store });
 *   host.onFrame((f) => edge.deliver(f));
 *   host.handleFrame({ kind: 'open', session: 's1', tenant: 't1', config });
 */
export class SessionHost {
  private readonly sessions = new Map<string, SessionRuntime>();
  private readonly opening = new Map<string, EdgeToWorkerFrame[]>();
  /** Sessions to hand over once their open completes (a subset of `opening`, so bounded like it). */
  private readonly handOverOnOpen = new Set<string>();
  private readonly listeners = new Set<(frame: WorkerToEdgeFrame) => void>();
  private readonly unsubscribeWork: () => void;
  readonly stepStats = new StepStats();
  readonly media: MediaStore;

  constructor(private readonly opts: SessionHostOptions) {
    this.media = opts.media ?? new MemoryMediaStore();
    this.unsubscribeWork = opts.executor.subscribe((event) => this.sessions.get(event.session)?.onWorkEvent(event));
  }

  onFrame(listener: (frame: WorkerToEdgeFrame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Boundary of the worker: every frame is validated here once. */
  handleFrame(raw: unknown): void {
    const parsed = EdgeToWorkerFrameSchema.safeParse(raw);
    const session = typeof raw === 'object' && raw !== null && 'session' in raw ? String(raw.session) : '';
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.emit({
        kind: 'error',
        session,
        code: 'invalid_event',
        message: `invalid relay frame at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'malformed'}`,
      });
      return;
    }
    const frame = parsed.data;
    const queued = this.opening.get(frame.session);
    if (queued) {
      queued.push(frame);
      return;
    }
    if (frame.kind === 'open') {
      void this.open(frame);
      return;
    }
    const runtime = this.sessions.get(frame.session);
    if (!runtime) {
      this.emit({
        kind: 'error',
        session: frame.session,
        code: 'wrong_session',
        message: `no session ${frame.session} on this worker`,
      });
      return;
    }
    runtime.handleFrame(frame);
    if (frame.kind === 'close') this.sessions.delete(frame.session);
  }

  private async phrasesOf(tenant: string): Promise<readonly string[]> {
    if (!this.opts.spokenPhrases) return [];
    try {
      return (await this.opts.spokenPhrases(tenant)).slice(0, MAX_SPOKEN_PHRASES);
    } catch {
      return [];
    }
  }

  private async open(frame: Extract<EdgeToWorkerFrame, { kind: 'open' }>): Promise<void> {
    if (this.sessions.has(frame.session)) {
      this.emit({
        kind: 'error',
        session: frame.session,
        code: 'wrong_session',
        message: `session ${frame.session} is already open`,
      });
      return;
    }
    this.opening.set(frame.session, []);
    try {
      const startSeq = await this.opts.store.lastSeq(frame.session);
      // A session with a timeline resumes: its context is rebuilt from what was said and heard.
      const stored = startSeq === 0 ? [] : await this.opts.store.read(frame.session);
      const resumed = startSeq === 0 ? undefined : replayTimeline(stored);
      const incarnation = resumed === undefined ? 0 : resumed.lastIncarnation + 1;
      const phrases = await this.phrasesOf(frame.tenant);
      const recentAudio = resumed ? await readRecentAudio(this.media, frame.session, resumed.recentAudio) : [];
      const model = await this.opts.model.openSession({
        sessionId: frame.session,
        incarnation,
        voice: frame.config.voice,
        ...(phrases.length > 0 ? { phrases } : {}),
        ...(frame.config.instructions ? { instructions: frame.config.instructions } : {}),
        ...(resumed ? { history: resumed.history } : {}),
        ...(resumed?.parked ? { parked: resumed.parked } : {}),
      });
      const runtime = new SessionRuntime({
        sessionId: frame.session,
        tenant: frame.tenant,
        incarnation,
        config: frame.config,
        model,
        executor: this.opts.executor,
        store: this.opts.store,
        media: this.media,
        emit: (f) => this.emit(f),
        startSeq,
        ...(resumed ? { resumed, recentAudio, earlierUtterances: latestUtterances(stored) } : {}),
        ...(this.opts.now ? { now: this.opts.now } : {}),
        ...(this.opts.autoStep === false ? { autoStep: false } : {}),
        onStep: (s) => this.stepStats.record(s.latencyMs, s.missed),
        ...(this.opts.inputAudio ? { inputAudio: this.opts.inputAudio } : {}),
        reopenModel: (next) =>
          this.opts.model.openSession({
            sessionId: frame.session,
            incarnation: next,
            voice: runtime.config.voice,
            ...(phrases.length > 0 ? { phrases } : {}),
            ...(runtime.config.instructions ? { instructions: runtime.config.instructions } : {}),
          }),
      });
      this.sessions.set(frame.session, runtime);
      runtime.start();
    } catch (err) {
      const e = toVenusError(err, 'model_unavailable');
      this.emit({
        kind: 'error',
        session: frame.session,
        code: e.code,
        message: `could not open session: ${e.message}`,
      });
      this.emit({ kind: 'closed', session: frame.session, reason: e.code });
      this.opening.delete(frame.session);
      this.handOverOnOpen.delete(frame.session);
      return;
    }
    const queued = this.opening.get(frame.session) ?? [];
    this.opening.delete(frame.session);
    for (const f of queued) this.handleFrame(f);
    if (this.handOverOnOpen.delete(frame.session)) this.handOver(frame.session);
  }

  /**
   * Hands a session over (drain): it leaves this host at once, and `closed` with HANDOVER_REASON
   * follows once its timeline writes are stored (`SessionRuntime.release`); its delegations go on
   * for the next incarnation. A session still opening is handed over once open.
   */
  handOver(session: string): void {
    if (this.opening.has(session)) {
      this.handOverOnOpen.add(session);
      return;
    }
    const runtime = this.sessions.get(session);
    if (!runtime) {
      this.emit({ kind: 'closed', session, reason: HANDOVER_REASON });
      return;
    }
    this.sessions.delete(session);
    runtime.release(HANDOVER_REASON).catch((err: unknown) => {
      log.warn({ err, session }, 'handover failed');
    });
  }

  session(id: string): SessionRuntime | undefined {
    return this.sessions.get(id);
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  private emit(frame: WorkerToEdgeFrame): void {
    for (const l of this.listeners) {
      try {
        l(frame);
      } catch (err) {
        // A failing listener (a closed edge socket) must not stop the session.
        log.warn({ err, session: frame.session, kind: frame.kind }, 'frame listener failed');
      }
    }
  }

  async close(): Promise<void> {
    this.unsubscribeWork();
    await Promise.all([...this.sessions.values()].map((s) => s.close('worker_shutdown')));
    this.sessions.clear();
    if (!this.opts.media) await this.media.close();
  }
}
