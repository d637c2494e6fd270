import {
  type ContextEntry,
  heardText,
  isTerminal,
  type MediaRef,
  type TimelineEvent,
  type WorkState,
} from '@venus/protocol';

/** Context entries a resumed session starts with: the recent conversation, not all of it. */
export const MAX_REPLAYED_ENTRIES = 200;

/**
 * The most recent user audio a resumed session hears again: the microphone input after the last
 * recognised utterance, at most this long. An utterance the user was in the middle of when the old
 * worker stopped is heard whole by the new one; silence heard again costs a step's worth of work.
 */
export const RECENT_AUDIO_WINDOW_MS = 4_000;

/** Inputs of the window at most (bounds memory whatever the frames' size: 10 ms frames fill it). */
const MAX_RECENT_AUDIO_INPUTS = 400;

/** One microphone input of the recent audio window, as stored (its samples are in the media store). */
export interface RecentAudio {
  inputSeq: number;
  audio: MediaRef;
}

/** A delegation that had not ended when the old incarnation stopped: it is re-bound, not expired. */
export interface OpenWork {
  workId: string;
  query: string;
  utteranceId: string | null;
  state: WorkState;
  createdAtMs: number;
}

/** What a new incarnation rebuilds from a session's stored timeline. */
export interface ReplayedSession {
  /**
   * What the user said and what they heard of each reply (not what was merely generated), and the
   * history the client restored (system entries among it), in order.
   */
  history: ContextEntry[];
  /** The last plan parked and not yet resumed. */
  parked: { planId: string; utteranceId: string; remainder: string } | null;
  /** Delegations still open, to be delivered to the new incarnation. */
  openWorks: OpenWork[];
  /** An utterance the old incarnation was speaking when it stopped: how much of it was heard. */
  cut: { utteranceId: string; heardText: string } | null;
  /** The highest incarnation recorded so far. */
  lastIncarnation: number;
  /** The last user input sequence number used. */
  lastInputSeq: number;
  /**
   * Microphone input since the last recognised utterance, oldest first, at most
   * RECENT_AUDIO_WINDOW_MS of it: what the new incarnation's model hears again before live input.
   */
  recentAudio: RecentAudio[];
}

interface Spoken {
  text: string;
  audioMs: number;
  ackedMs: number;
  finished: boolean;
  /** Heard text an interruption recorded (it wins over the estimate from acknowledgements). */
  heard: string | null;
  entry: ContextEntry;
}

/**
 * Rebuilds a session's conversation from its timeline, as the edge's clients experienced it. An
 * assistant utterance counts for what was heard of it: the `heardText` its interruption recorded,
 * or else the one heard-text rule over its text and audio up to the last playback acknowledgement
 * (nothing acknowledged: nothing heard). Pure; memory is bounded by `MAX_REPLAYED_ENTRIES`.
 *
 * @example
 *   const replayed = replayTimeline(await store.read(session));
 *   await model.openSession({ sessionId: session, incarnation: replayed.lastIncarnation + 1, history: replayed.history });
 */
export function replayTimeline(events: readonly TimelineEvent[]): ReplayedSession {
  const history: ContextEntry[] = [];
  const spoken = new Map<string, Spoken>();
  const works = new Map<string, OpenWork>();
  /** Results landed and not yet admitted (bounded by the delegation limits of one session). */
  const results = new Map<string, string>();
  let parked: ReplayedSession['parked'] = null;
  let lastIncarnation = 0;
  let lastInputSeq = 0;
  /** A delegate event follows its utterance's start: the latest started utterance made it. */
  let lastUtterance: string | null = null;
  const recentAudio: RecentAudio[] = [];
  let recentMs = 0;
  const push = (entry: ContextEntry) => {
    history.push(entry);
    if (history.length > MAX_REPLAYED_ENTRIES * 2) history.splice(0, history.length - MAX_REPLAYED_ENTRIES);
  };
  for (const e of events) {
    if ('inputSeq' in e.data) lastInputSeq = Math.max(lastInputSeq, e.data.inputSeq);
    switch (e.type) {
      case 'session.incarnation':
        lastIncarnation = Math.max(lastIncarnation, e.data.incarnation);
        break;
      case 'user.text':
        push({ role: 'user', text: e.data.text });
        break;
      case 'conversation.restored':
        push({ role: e.data.role, text: e.data.text });
        break;
      case 'user.audio':
        recentAudio.push({ inputSeq: e.data.inputSeq, audio: e.data.audio });
        recentMs += e.data.audio.durationMs;
        while (
          recentAudio.length > MAX_RECENT_AUDIO_INPUTS ||
          (recentAudio.length > 1 && recentMs > RECENT_AUDIO_WINDOW_MS)
        ) {
          recentMs -= recentAudio.shift()!.audio.durationMs;
        }
        break;
      case 'user.transcript': {
        if (e.data.addressed && e.data.text) push({ role: 'user', text: e.data.text });
        // What the recogniser has heard is in the context (or was not for the assistant): not heard again.
        const heardUpTo = e.data.audio.toInputSeq;
        while (recentAudio.length > 0 && recentAudio[0]!.inputSeq <= heardUpTo) {
          recentMs -= recentAudio.shift()!.audio.durationMs;
        }
        break;
      }
      case 'assistant.utterance': {
        const id = e.data.utteranceId;
        if (e.data.phase === 'started' && !spoken.has(id)) {
          lastUtterance = id;
          const entry: ContextEntry = { role: 'assistant', text: '' };
          spoken.set(id, { text: '', audioMs: 0, ackedMs: 0, finished: false, heard: null, entry });
          push(entry);
        } else if (e.data.phase === 'finished') {
          const u = spoken.get(id);
          if (u) u.finished = true;
        }
        break;
      }
      case 'assistant.text': {
        const u = spoken.get(e.data.utteranceId);
        if (u) u.text += e.data.delta;
        break;
      }
      case 'assistant.audio': {
        const u = spoken.get(e.data.utteranceId);
        if (u) u.audioMs = Math.max(u.audioMs, e.data.startMs + e.data.durationMs);
        break;
      }
      case 'playback.ack': {
        const u = spoken.get(e.data.utteranceId);
        if (u) u.ackedMs = Math.max(u.ackedMs, e.data.playedMs);
        break;
      }
      case 'assistant.interruption': {
        const u = e.data.utteranceId === null ? undefined : spoken.get(e.data.utteranceId);
        if (u) u.heard = e.data.heardText;
        break;
      }
      case 'assistant.parked':
        parked = { ...e.data };
        break;
      case 'assistant.resumed':
        if (parked?.planId === e.data.planId) parked = null;
        break;
      case 'assistant.delegate':
        works.set(e.data.workId, {
          workId: e.data.workId,
          query: e.data.query,
          utteranceId: lastUtterance,
          state: 'QUEUED',
          createdAtMs: e.atMs,
        });
        break;
      case 'work.state': {
        const w = works.get(e.data.workId);
        if (w === undefined) break;
        if (isTerminal(e.data.state)) works.delete(e.data.workId);
        else w.state = e.data.state;
        break;
      }
      case 'work.result':
        results.set(e.data.result.workId, e.data.result.text);
        break;
      case 'work.admitted': {
        // The result entered the old context as `<backend>`: the new one has it too.
        const text = results.get(e.data.workId);
        results.delete(e.data.workId);
        // Its result is in the context already (below): it is not delivered a second time.
        works.delete(e.data.workId);
        if (text !== undefined) push({ role: 'backend', text });
        break;
      }
      default:
        break;
    }
  }
  let cut: ReplayedSession['cut'] = null;
  for (const [utteranceId, u] of spoken) {
    const heard = u.heard ?? heardSoFar(u);
    u.entry.text = heard;
    if (!u.finished) cut = { utteranceId, heardText: heard };
  }
  const kept = history.filter((entry) => entry.text.trim() !== '').slice(-MAX_REPLAYED_ENTRIES);
  return { history: kept, parked, openWorks: [...works.values()], cut, lastIncarnation, lastInputSeq, recentAudio };
}

function heardSoFar(u: Spoken): string {
  if (u.ackedMs <= 0 || u.audioMs <= 0) return '';
  return heardText([{ text: u.text, durationMs: u.audioMs }], u.ackedMs);
}
