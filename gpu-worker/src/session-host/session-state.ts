import type { MediaStore, SessionConfig, WorkerToEdgeFrame } from '@venus/protocol';
import { DelegationBook } from './delegation-book.ts';
import type { ModelSupervisor } from './model-supervisor.ts';
import { PlaybackLedger } from './playback-ledger.ts';
import type { TimelineWriter } from './timeline-writer.ts';
import type { UtteranceHandle } from './utterance-handle.ts';

/**
 * What one session's parts share: its identity and clocks, the timeline writer, the model
 * supervisor, played-audio accounts, the delegation book, and the conversational state read at
 * boundaries. Each part owns its own fields here; nothing else mutates them.
 */
export class SessionState {
  readonly ledger = new PlaybackLedger();
  readonly book: DelegationBook;
  /** The utterance being emitted now (not yet finished). */
  current: UtteranceHandle | null = null;
  /** Utterances cut by an interruption or cancel: their late output is dropped. */
  readonly dropped = new Set<string>();
  decision: 'listen' | 'speak' = 'listen';
  userSpeaking = false;
  /** When the user's last speech burst ended (host ms), or null while none has. */
  userSpeechEndedAtMs: number | null = null;
  /** Session time of the last speech of either side, or of typed user input. */
  lastActivityAtMs = 0;
  /** The user said or typed something since the last spoken admission. */
  userInputSinceAdmission = false;
  /** The evidence snapshot of the delegate span being parsed: the last seq when its tag opened. */
  evidenceCutoffSeq = 0;
  closed = false;
  private readonly startedAt: number;

  constructor(
    readonly sessionId: string,
    readonly tenant: string,
    public config: SessionConfig,
    readonly now: () => number,
    readonly writer: TimelineWriter,
    readonly model: ModelSupervisor,
    /** Where audio samples go; the timeline keeps references to them. */
    readonly media: MediaStore,
    /** Frames to the edge that are not timeline events (assistant audio samples). */
    readonly emit: (frame: WorkerToEdgeFrame) => void,
  ) {
    this.startedAt = now();
    this.book = new DelegationBook(sessionId);
  }

  /** Session clock in ms. */
  nowMs(): number {
    return this.now() - this.startedAt;
  }

  active(): UtteranceHandle | null {
    return this.current && !this.current.finished ? this.current : null;
  }
}
