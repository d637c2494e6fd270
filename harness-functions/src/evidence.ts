import { setTimeout as sleep } from 'node:timers/promises';
import type { DelegationRequest, MediaRef, TimelineEvent, TimelineStore } from '@venus/protocol';

/** What the harness needs of a timeline: reads by seq range. Both TimelineStores satisfy it. */
export type TimelineReader = Pick<TimelineStore, 'read'>;

/**
 * How much of the timeline a delegation's evidence holds, whichever bound is reached first. The
 * evidence is read once per delegation and dropped with it, so these bound the harness's memory
 * per running work (events are read, reduced to text and references, then released).
 */
export const EVIDENCE_LIMITS: Readonly<EvidenceLimits> = {
  /** Events read back from the cutoff (seqs are contiguous, so one bounded range read). */
  maxEvents: 256,
  /** Session-clock span before the cutoff event. */
  windowMs: 60_000,
  /** Characters of transcript text kept, newest first; older lines are dropped. */
  maxTranscriptChars: 4096,
  /** Audio spans kept, newest first. */
  maxAudioRefs: 16,
  /** Waits for a timeline that has not caught up with the cutoff yet (host writes are asynchronous). */
  catchUpDelaysMs: [10, 20, 40, 80, 160],
};

export interface EvidenceLimits {
  maxEvents: number;
  windowMs: number;
  maxTranscriptChars: number;
  maxAudioRefs: number;
  catchUpDelaysMs: readonly number[];
}

/** One line of what was said: typed user text, or the part of an assistant reply the user heard. */
export interface EvidenceLine {
  speaker: 'user' | 'assistant';
  /** `typed`: user.text; `spoken`: an assistant reply played to its end; `heard`: the heard part of an interrupted one. */
  source: 'typed' | 'spoken' | 'heard';
  text: string;
  /** Where the line starts on the timeline (for an assistant reply: its first event). */
  seq: number;
  atMs: number;
}

/**
 * A run of audio events of one stream (one assistant utterance, or unbroken microphone input): its
 * first and last media segments, so a reader can fetch the samples (while the media store keeps them).
 */
export interface EvidenceAudioRef {
  stream: 'user' | 'assistant';
  fromSeq: number;
  toSeq: number;
  atMs: number;
  durationMs: number;
  first: MediaRef;
  last: MediaRef;
  utteranceId?: string;
}

/**
 * The conversation as it stood at a delegation's opening tag: never anything past `cutoffSeq`.
 * User speech has no transcript on the timeline yet (no event carries one), so user lines are typed text.
 * An assistant reply still playing at the cutoff is left out: what of it was heard is not known yet.
 */
export interface Evidence {
  session: string;
  cutoffSeq: number;
  /** Oldest first. */
  transcript: EvidenceLine[];
  /** Oldest first. */
  audio: EvidenceAudioRef[];
  /** False when the timeline had not reached the cutoff within the catch-up waits. */
  complete: boolean;
}

/**
 * Reads a delegation's evidence: the last events up to and including `evidenceCutoffSeq`, never
 * past it. If the cutoff event is not stored yet it waits (EVIDENCE_LIMITS.catchUpDelaysMs, under
 * `signal`), then makes do with what is there (`complete: false`).
 *
 * @example
 *   const evidence = await readEvidence(store, request, { signal });
 *   evidence.transcript.at(-1); // { speaker: 'user', source: 'typed', text: "What's the weather in Paris?", ... }
 */
export async function readEvidence(
  timeline: TimelineReader,
  request: Pick<DelegationRequest, 'session' | 'evidenceCutoffSeq'>,
  options: { signal?: AbortSignal; limits?: Partial<EvidenceLimits> } = {},
): Promise<Evidence> {
  const limits = { ...EVIDENCE_LIMITS, ...options.limits };
  const { session, evidenceCutoffSeq: cutoffSeq } = request;
  const range = { fromSeq: Math.max(1, cutoffSeq - limits.maxEvents + 1), toSeq: cutoffSeq };
  let events = cutoffSeq === 0 ? [] : await timeline.read(session, range);
  for (const delayMs of limits.catchUpDelaysMs) {
    if (cutoffSeq === 0 || events.at(-1)?.seq === cutoffSeq) break;
    await sleep(delayMs, undefined, options.signal ? { signal: options.signal } : {});
    events = await timeline.read(session, range);
  }
  const complete = cutoffSeq === 0 || events.at(-1)?.seq === cutoffSeq;
  return { ...buildEvidence(session, cutoffSeq, events, limits), complete };
}

/** Reduces timeline events to evidence; pure. Events past `cutoffSeq` are ignored whatever the reader returned. */
export function buildEvidence(
  session: string,
  cutoffSeq: number,
  events: readonly TimelineEvent[],
  limits: Pick<EvidenceLimits, 'windowMs' | 'maxTranscriptChars' | 'maxAudioRefs'> = EVIDENCE_LIMITS,
): Omit<Evidence, 'complete'> {
  const visible = events.filter((e) => e.session === session && e.seq <= cutoffSeq);
  const lastAtMs = visible.at(-1)?.atMs ?? 0;
  const inWindow = visible.filter((e) => e.atMs >= lastAtMs - limits.windowMs);
  const transcript: EvidenceLine[] = [];
  const audio: EvidenceAudioRef[] = [];
  const replies = new Map<string, Reply>();
  const reply = (id: string, e: TimelineEvent): Reply => {
    let r = replies.get(id);
    // Text before its `started` event means the reply began before the window: only part of it is here.
    if (r === undefined) {
      r = { seq: e.seq, atMs: e.atMs, text: '', partial: true, ended: false };
      replies.set(id, r);
    }
    return r;
  };
  // One open run per utterance (assistant) and one for the microphone (user, split where inputSeq skips).
  const runs = new Map<string, EvidenceAudioRef & { nextInputSeq?: number }>();
  const addAudio = (e: TimelineEvent, ref: MediaRef, at: { utteranceId: string } | { inputSeq: number }) => {
    const { durationMs } = ref;
    const key = 'utteranceId' in at ? `assistant:${at.utteranceId}` : 'user';
    const inputSeq = 'inputSeq' in at ? at.inputSeq : undefined;
    const run = runs.get(key);
    if (run !== undefined && (inputSeq === undefined || run.nextInputSeq === inputSeq)) {
      run.toSeq = e.seq;
      run.durationMs += durationMs;
      run.last = ref;
    } else {
      const stream = 'utteranceId' in at ? 'assistant' : 'user';
      const opened: EvidenceAudioRef = {
        stream,
        fromSeq: e.seq,
        toSeq: e.seq,
        atMs: e.atMs,
        durationMs,
        first: ref,
        last: ref,
      };
      if ('utteranceId' in at) opened.utteranceId = at.utteranceId;
      audio.push(opened);
      runs.set(key, opened);
    }
    if (inputSeq !== undefined) runs.get(key)!.nextInputSeq = inputSeq + 1;
  };

  for (const e of inWindow) {
    switch (e.type) {
      case 'user.text':
        transcript.push({ speaker: 'user', source: 'typed', text: e.data.text, seq: e.seq, atMs: e.atMs });
        break;
      case 'assistant.utterance':
        if (e.data.phase === 'started') {
          replies.set(e.data.utteranceId, { seq: e.seq, atMs: e.atMs, text: '', partial: false, ended: false });
        } else endReply(replies.get(e.data.utteranceId), e.data.reason === 'completed' ? 'spoken' : null, transcript);
        break;
      case 'assistant.text':
        reply(e.data.utteranceId, e).text += e.data.delta;
        break;
      case 'assistant.interruption':
        // A backchannel lets the reply go on: what was heard is known when it ends.
        if (e.data.action !== 'continue' && e.data.utteranceId !== null) {
          const r = reply(e.data.utteranceId, e);
          r.text = e.data.heardText;
          endReply(r, 'heard', transcript);
        }
        break;
      case 'user.audio':
        addAudio(e, e.data.audio, { inputSeq: e.data.inputSeq });
        break;
      case 'assistant.audio':
        addAudio(e, e.data.audio, { utteranceId: e.data.utteranceId });
        break;
      default:
        break;
    }
  }
  transcript.sort((a, b) => a.seq - b.seq);
  return {
    session,
    cutoffSeq,
    transcript: newestWithin(transcript, limits.maxTranscriptChars),
    audio: audio
      .slice(-limits.maxAudioRefs)
      .map(({ nextInputSeq: _n, ...ref }: EvidenceAudioRef & { nextInputSeq?: number }) => ref),
  };
}

interface Reply {
  seq: number;
  atMs: number;
  text: string;
  partial: boolean;
  ended: boolean;
}

function endReply(r: Reply | undefined, source: 'spoken' | 'heard' | null, transcript: EvidenceLine[]): void {
  if (r === undefined || r.ended) return;
  r.ended = true;
  // A reply that began before the window has only part of its text; heard text is whole whatever the window.
  if (r.partial && source === 'spoken') return;
  const text = r.text.trim();
  if (source !== null && text !== '') transcript.push({ speaker: 'assistant', source, text, seq: r.seq, atMs: r.atMs });
}

/** The newest lines whose text fits in `maxChars`; a single longer line keeps its end. */
function newestWithin(lines: readonly EvidenceLine[], maxChars: number): EvidenceLine[] {
  const kept: EvidenceLine[] = [];
  let left = maxChars;
  for (let i = lines.length - 1; i >= 0 && left > 0; i--) {
    const line = lines[i]!;
    if (line.text.length <= left) {
      kept.push(line);
      left -= line.text.length;
    } else {
      if (kept.length === 0) kept.push({ ...line, text: line.text.slice(-left) });
      break;
    }
  }
  return kept.reverse();
}

/** The transcript as plain lines for a model prompt, e.g. `user: What's the weather in Paris?`. */
export function evidenceTranscript(evidence: Evidence): string {
  return evidence.transcript
    .map((l) => `${l.speaker}${l.source === 'heard' ? ' (interrupted; heard)' : ''}: ${l.text}`)
    .join('\n');
}
