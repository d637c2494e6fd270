import type { WorkerToEdgeFrame } from '../relay-frames.ts';
import type { TimelineEvent } from '../timeline.ts';
import type { VenusMetrics } from './metrics.ts';

/** Sessions followed at once; past it the longest-followed is forgotten (a worker holds far fewer). */
const MAX_SESSIONS = 10_000;

interface TurnState {
  /** Session clock of the user's last end of speech not yet answered. */
  userStoppedAt?: number;
  /** Session clock of the user starting to speak over the assistant, until its speech stops. */
  overlapAt?: number;
  speaking: boolean;
}

/**
 * Derives the turn-taking and delegation series from the timeline frames a session host emits
 * (`host.onFrame(observer.observe)`), on the session clock each event carries:
 * - response latency: `user.speech` stopped -> the next utterance's first `assistant.audio` chunk;
 * - stop latency: `user.speech` started while an utterance plays -> that speech ending (an
 *   `assistant.interruption` other than `continue`, or the utterance finishing); a backchannel the
 *   assistant talks through (`continue`) is no stop and is not counted;
 * - `work.state` -> delegations by state.
 * Each frame costs a map lookup; per-session state is dropped when the session closes.
 */
export class TimelineMetrics {
  readonly #turns = new Map<string, TurnState>();

  constructor(
    private readonly metrics: VenusMetrics,
    private readonly worker: string,
  ) {}

  readonly observe = (frame: WorkerToEdgeFrame): void => {
    if (frame.kind === 'closed') {
      this.#turns.delete(frame.session);
      return;
    }
    if (frame.kind === 'timeline') this.#event(frame.event);
  };

  /** Sessions with turn state held now. */
  get size(): number {
    return this.#turns.size;
  }

  #event(event: TimelineEvent): void {
    switch (event.type) {
      case 'work.state':
        this.metrics.delegations.inc({ state: event.data.state });
        return;
      case 'session.closed':
        this.#turns.delete(event.session);
        return;
      case 'user.speech': {
        const turn = this.#turn(event.session);
        if (event.data.state === 'stopped') turn.userStoppedAt = event.atMs;
        else {
          turn.userStoppedAt = undefined;
          if (turn.speaking && turn.overlapAt === undefined) turn.overlapAt = event.atMs;
        }
        return;
      }
      case 'assistant.utterance': {
        const turn = this.#turn(event.session);
        turn.speaking = event.data.phase === 'started';
        if (!turn.speaking) this.#stopped(turn, event.atMs);
        return;
      }
      case 'assistant.interruption': {
        const turn = this.#turn(event.session);
        if (event.data.action === 'continue') turn.overlapAt = undefined;
        else this.#stopped(turn, event.atMs);
        return;
      }
      case 'assistant.audio': {
        const turn = this.#turns.get(event.session);
        if (turn?.userStoppedAt === undefined || event.data.startMs !== 0) return;
        this.metrics.responseLatency.observe({ worker: this.worker }, (event.atMs - turn.userStoppedAt) / 1000);
        turn.userStoppedAt = undefined;
        return;
      }
      default:
        return;
    }
  }

  #stopped(turn: TurnState, atMs: number): void {
    if (turn.overlapAt === undefined) return;
    this.metrics.stopLatency.observe({ worker: this.worker }, Math.max(0, atMs - turn.overlapAt) / 1000);
    turn.overlapAt = undefined;
  }

  #turn(session: string): TurnState {
    let turn = this.#turns.get(session);
    if (turn === undefined) {
      if (this.#turns.size >= MAX_SESSIONS) {
        const oldest = this.#turns.keys().next().value;
        if (oldest !== undefined) this.#turns.delete(oldest);
      }
      turn = { speaking: false };
      this.#turns.set(session, turn);
    }
    return turn;
  }
}
