import type { OutputStep } from '@venus/protocol';
import { DelegateParser } from './delegate-parser.ts';
import type { SessionState } from './session-state.ts';
import type { UtteranceEnd, UtteranceHandle } from './utterance-handle.ts';
import type { WorkDesk } from './work-desk.ts';

/**
 * Publishes what the model produced in one step: perceived user speech and the words it recognised
 * in it (`user.transcript`), utterance starts and ends,
 * visible text (hidden delegate spans parsed out and handed to the work desk), speech audio with its
 * played-audio account, control decisions. Interruption verdicts are passed to `onInterruption`.
 */
export class StepOutput {
  private readonly parser = new DelegateParser();
  /** Utterances whose end is on the timeline (an interrupt ends the handle before it is recorded). */
  private readonly recorded = new WeakSet<UtteranceHandle>();

  constructor(
    private readonly s: SessionState,
    private readonly desk: WorkDesk,
    private readonly onInterruption: (verdict: NonNullable<OutputStep['interruption']>, chunk: number) => void,
  ) {}

  /** `listenOnly`: the step was a perception tick; it only ends an utterance it stopped, never starts or paces one. */
  publish(step: OutputStep, chunk: number, listenOnly = false): void {
    const { s } = this;
    const nowMs = s.nowMs();
    if (step.userSpeech) {
      s.userSpeaking = step.userSpeech.state === 'started';
      s.userSpeechEndedAtMs = s.userSpeaking ? null : nowMs;
      s.lastActivityAtMs = nowMs;
      s.writer.append({ stream: 'user', type: 'user.speech', data: { ...step.userSpeech } }, chunk);
    }
    for (const t of step.userTranscripts ?? []) {
      if (t.addressed) {
        s.lastActivityAtMs = nowMs;
        s.userInputSinceAdmission = true;
      }
      s.writer.append({ stream: 'user', type: 'user.transcript', data: { ...t, audio: { ...t.audio } } }, chunk);
    }
    if (step.interruption) this.onInterruption(step.interruption, chunk);
    const id = step.utteranceId;
    if (listenOnly && id === null) return;
    if (id === null || s.dropped.has(id)) {
      this.setDecision('listen', chunk);
      return;
    }
    if (s.current?.id !== id && !s.ledger.get(id)) this.startUtterance(step, id, chunk);
    const u = s.ledger.get(id);
    if (!u || u.finished) return;
    this.setDecision(step.decision, chunk);
    if (step.text) this.consumeText(u, step.text, chunk);
    if (step.spokenSegments) u.addSegments(step.spokenSegments);
    if (step.audio && step.audio.length > 0) this.publishAudio(u, step, chunk, nowMs);
    if (step.resumeOffer)
      s.writer.append({ stream: 'assistant', type: 'assistant.resume_offer', data: { ...step.resumeOffer } }, chunk);
    if (step.turnFinished) {
      this.finish(u, step.finishReason === 'interrupted' ? 'discarded' : 'completed', chunk);
      s.writer.append({ stream: 'assistant', type: 'assistant.control', data: { decision: 'turn_eos' } }, chunk);
      s.decision = 'listen';
    }
  }

  private publishAudio(u: UtteranceHandle, step: OutputStep, chunk: number, nowMs: number): void {
    const { s } = this;
    const audio = step.audio as Int16Array;
    const ref = s.media.put(s.sessionId, 'assistant', audio, 24_000);
    const { audioChunkSeq } = step;
    // Samples travel to the edge as binary, right before the event that refers to them.
    const pcm24k = new Uint8Array(audio.buffer as ArrayBuffer, audio.byteOffset, audio.byteLength);
    s.emit({ kind: 'assistant_audio', session: s.sessionId, utteranceId: u.id, audioChunkSeq, pcm24k });
    const data = { utteranceId: u.id, audioChunkSeq, audio: ref, startMs: u.emittedMs, durationMs: ref.durationMs };
    s.writer.append({ stream: 'assistant', type: 'assistant.audio', data }, chunk);
    s.ledger.addAudio(u, ref.durationMs, nowMs);
    s.lastActivityAtMs = nowMs + ref.durationMs;
  }

  private startUtterance(step: OutputStep, id: string, chunk: number): void {
    const { s } = this;
    if (s.current && !s.current.finished) this.finish(s.current, 'completed', chunk);
    const u = s.ledger.start(id);
    s.current = u;
    const continues = step.continues?.utteranceId ?? step.continues?.planId;
    s.writer.append(
      {
        stream: 'assistant',
        type: 'assistant.utterance',
        data: { utteranceId: id, phase: 'started', ...(continues ? { continues } : {}) },
      },
      chunk,
    );
    if (step.continues?.planId)
      s.writer.append(
        { stream: 'assistant', type: 'assistant.resumed', data: { planId: step.continues.planId } },
        chunk,
      );
    // Which admitted result this utterance speaks: the model says so, or else it is the first
    // reply after an admission that is not a repair, a resume or a reply to new user input.
    const works = s.book.works;
    const speaking = step.speaksPrefill
      ? works.byAttempt(step.speaksPrefill.attemptId)
      : !step.continues && !step.resumeOffer && !s.userInputSinceAdmission
        ? works.all().find((w) => w.state === 'DELIVERING' && w.deliveredBy === null && w.attemptId !== null)
        : undefined;
    if (speaking) {
      speaking.deliveredBy = id;
      u.speaksAttemptId = speaking.attemptId;
    }
  }

  private consumeText(u: UtteranceHandle, text: string, chunk: number): void {
    const { s } = this;
    for (const ev of this.parser.push(text)) {
      if (ev.kind === 'text') {
        u.addText(ev.text);
        s.writer.append(
          { stream: 'assistant', type: 'assistant.text', data: { utteranceId: u.id, delta: ev.text } },
          chunk,
        );
      } else if (ev.kind === 'open') {
        // The evidence snapshot: the timeline as it stood when the opening tag appeared.
        s.evidenceCutoffSeq = s.writer.seq;
      } else if (ev.kind === 'close') {
        this.desk.delegate(u, ev.query, chunk);
      } else {
        s.writer.error('delegate_parse_error', `delegate span error in ${u.id}: ${ev.reason}`);
      }
    }
  }

  /** Ends `u` (unless it ended already) and records the end once; settles the result it spoke. */
  finish(u: UtteranceHandle, end: UtteranceEnd, chunk: number): void {
    const { s } = this;
    u.finish(end);
    if (s.current === u) s.current = null;
    if (this.recorded.has(u)) return;
    this.recorded.add(u);
    const reason = u.reason ?? end;
    const parseErrors = this.parser.endTurn();
    if (reason === 'completed')
      for (const e of parseErrors)
        s.writer.error(
          'delegate_parse_error',
          `delegate span error in ${u.id}: ${e.kind === 'error' ? e.reason : e.kind}`,
        );
    s.writer.append(
      { stream: 'assistant', type: 'assistant.utterance', data: { utteranceId: u.id, phase: 'finished', reason } },
      chunk,
    );
    this.desk.checkDelivered(u, chunk);
  }

  setDecision(decision: 'listen' | 'speak', chunk: number): void {
    if (decision === this.s.decision) return;
    this.s.decision = decision;
    this.s.writer.append({ stream: 'assistant', type: 'assistant.control', data: { decision } }, chunk);
  }
}
