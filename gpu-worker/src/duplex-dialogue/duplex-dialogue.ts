import {
  type ContextEntry,
  heardText,
  type OutputStep,
  type PrefillAck,
  type PrefillRequest,
  type StepRequest,
  stripReservedTags,
  type UserTranscript,
} from '@venus/protocol';
import { firstHeadVerdict } from '../perception/head-verdict.ts';
import { type FeatureRow, OverlapFeatureTracker, type PartialWords } from '../perception/overlap-features.ts';
import { type Interruption, judgeOverlap } from '../perception/overlap-policy.ts';
import { type Burst, VoiceActivity, type VoiceUpdate } from '../perception/voice-activity.ts';
import { InputFence } from './input-fence.ts';
import { closeUtterance, listenStep } from './output-step.ts';
import { PrefillLedger } from './prefill-ledger.ts';
import { SpeechPacing, type SpokenUtterance } from './speech-pacing.ts';

/** The inputs a step consumed, and the VAD frames it needs scored before it can finish. */
export interface DialogueStepPlan {
  request: StepRequest;
  frames: Float32Array[];
  audio: Int16Array[];
  /** The input each entry of `audio` came in. */
  audioSeqs: number[];
  texts: string[];
  audioMs: number;
  /** Voice activity over the step's frames, once heard (see `hearStep`), with the overlap head's rows. */
  heard?: { voice: VoiceUpdate; wasInSpeech: boolean; rows: FeatureRow[] };
}

export interface StepOutcome {
  interruption?: Interruption;
  stopped?: { utteranceId: string | null; wasCurrent: boolean; chunkSeq: number };
}

export interface DuplexDialogueOptions {
  sessionId: string;
  incarnation: number;
}

const RECENT_UTTERANCES = 64;

/**
 * The duplex dialogue core shared by the thread-backed models that hear through our VAD (the
 * reference model's rules, the cascade's chat model): it owns the input fences, voice activity and
 * the overlap verdicts, the step skeleton (numbering, the stopped-utterance branch), the pacing of
 * speech (speech-pacing.ts), prefill de-duplication and what a final playback acknowledgement
 * leaves in the context. The responder is the subclass: it reads what the user said (`hear`), picks
 * what to say next (`nextUtterance`) and keeps its context (`keepHeard`, `finished`). A step is two
 * halves so that a thread can batch the VAD of many sessions between them.
 *
 * @example
 *   const plan = dialogue.beginStep({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   const out = dialogue.finishStep(plan, await vad.score(dialogue.voice.stream, plan.frames));
 */
export abstract class DuplexDialogue<U extends SpokenUtterance> {
  readonly voice = new VoiceActivity();
  private readonly overlapFeatures = new OverlapFeatureTracker();
  /** The last step's overlaps were judged by the trained head (not the v1 rules). */
  protected headJudges = false;
  /** Where the responder hears words (a recogniser), if it does: the overlap head's word cues. */
  protected wordSource: { readonly available: boolean; readonly words: PartialWords } | null = null;
  protected readonly idPrefix: string;
  /** The utterance being spoken (started, not finished). */
  protected current: U | null = null;
  /** The utterance spoken last, finished or not. */
  protected last: U | null = null;
  protected closed = false;
  private readonly inputs = new InputFence<{
    audio?: Int16Array;
    seq?: number;
    text?: string;
    restored?: ContextEntry;
  }>();
  /** Utterances recognised since the last step, reported on the next output step. */
  protected readonly transcripts: UserTranscript[] = [];
  private readonly recent = new Map<string, U>();
  private readonly prefills = new PrefillLedger();
  private readonly pacing = new SpeechPacing<U>({
    starting: (u, out) => {
      this.current = u;
      this.last = u;
      this.starting(u, out);
    },
    completed: (u) => this.finish(u, 'completed'),
    pendingSpeech: (u) => this.pendingSpeech(u),
    current: () => this.current,
  });
  private outcome: StepOutcome = {};
  private audible = false;
  private stepSeq = 0;

  constructor(options: DuplexDialogueOptions) {
    this.idPrefix = options.incarnation === 0 ? 'utt_' : `utt_${options.incarnation}_`;
  }

  appendAudio(inputSeq: number, pcm: Int16Array): void {
    this.inputs.push(inputSeq, { audio: pcm, seq: inputSeq });
  }

  appendText(inputSeq: number, text: string): void {
    this.inputs.push(inputSeq, { text });
  }

  /** A restored conversation item: taken into the context when a step reaches it, never answered. */
  appendHistory(inputSeq: number, entry: ContextEntry): void {
    // The client's text never carries protocol tags (a spoofed `<backend>` or `<delegate>`) into the context.
    this.inputs.push(inputSeq, { restored: { role: entry.role, text: stripReservedTags(entry.text).trim() } });
  }

  /**
   * Consumes the inputs up to the cutoff (never one past it). Restored history enters the context
   * here, so it is there before the step hears this step's typed text (history comes first: a
   * client restores before it speaks).
   */
  beginStep(request: StepRequest): DialogueStepPlan {
    this.beforeStep();
    const texts: string[] = [];
    const audio: Int16Array[] = [];
    const audioSeqs: number[] = [];
    let audioMs = 0;
    for (const input of this.inputs.take(request.inputSeqCutoff)) {
      if (input.audio) {
        this.voice.push(input.audio);
        audio.push(input.audio);
        audioSeqs.push(input.seq ?? 0);
        audioMs += input.audio.length / 16;
      } else if (input.text !== undefined) texts.push(input.text);
      else if (input.restored) this.restored(input.restored);
    }
    return { request, frames: this.voice.takeFrames(), audio, audioSeqs, texts, audioMs };
  }

  /**
   * Voice activity over the step's frames; returns the overlap head's rows (one per 80 ms decision
   * point of an overlapping burst not judged yet) for the host to score before `finishStep`.
   */
  hearStep(plan: DialogueStepPlan, probabilities: Float32Array): FeatureRow[] {
    const rows: FeatureRow[] = [];
    const wasInSpeech = this.voice.inSpeech;
    const words = this.partialWords();
    const voice = this.voice.update(probabilities, plan.frames, this.speaking, (frame, p, burst, ended) => {
      const row = this.overlapFeatures.frame(frame, p, burst, ended, words, this.voice.foregroundDb);
      if (row) rows.push(row);
    });
    plan.heard = { voice, wasInSpeech, rows };
    return rows;
  }

  /** `headScores`: the head's class probabilities for `hearStep`'s rows; without them the v1 rules judge. */
  finishStep(plan: DialogueStepPlan, probabilities: Float32Array, headScores?: readonly Float32Array[]): OutputStep {
    const { request } = plan;
    this.stepSeq += 1;
    this.pacing.step(request, plan.audioMs);
    this.outcome = {};
    this.audible = request.assistantAudible;

    if (!plan.heard) this.hearStep(plan, probabilities);
    const { voice, wasInSpeech, rows } = plan.heard!;
    this.headJudges = headScores !== undefined;
    this.perceived(plan, voice, wasInSpeech);
    // Words first: a transcript explains the speech burst that carries it, which is then not judged again.
    for (const text of plan.texts) this.hear(text);
    if (headScores) {
      const decided = firstHeadVerdict(rows, headScores);
      if (decided) this.applyVerdict(decided.burst, decided.verdict);
    } else {
      for (const milestone of voice.milestones) {
        const verdict = judgeOverlap(milestone, this.voice.foregroundDb);
        if (verdict) this.applyVerdict(milestone.burst, verdict);
      }
    }
    this.listened(plan, voice);

    const out = listenStep(this.stepSeq, request);
    if (voice.event) out.userSpeech = voice.event;
    if (this.transcripts.length > 0) out.userTranscripts = this.transcripts.splice(0);
    const { interruption, stopped } = this.outcome;
    if (interruption) out.interruption = interruption;
    // The stopped utterance closes on this step; whatever follows starts on the next one.
    if (stopped) return closeUtterance(out, stopped.utteranceId, stopped.chunkSeq, stopped.wasCurrent);
    if (request.listenOnly) return out;
    if (this.holdsStep(out)) return out;
    const u = this.current ?? this.nextUtterance();
    if (u) this.pacing.speak(u, out);
    return out;
  }

  /**
   * After a chunk step (`finishStep`) that started an utterance whose speech was not synthesised
   * yet: waits briefly for it and adds its first chunk to the same output (`SpeechPacing.complete`).
   */
  completeStep(out: OutputStep): Promise<OutputStep> {
    return this.pacing.complete(out);
  }

  prefill(request: PrefillRequest): PrefillAck {
    if (!this.prefills.admit(request.attemptId)) return { attemptId: request.attemptId, deduplicated: true };
    const text = stripReservedTags(request.text).replace(/\s+/g, ' ').trim();
    if (text) this.prefilled(text, request);
    return { attemptId: request.attemptId, deduplicated: false };
  }

  /**
   * A final acknowledgement fixes what the context keeps of a finished utterance: the host's
   * `heardText` when it sends one (computed by the same rule over the segments this dialogue
   * reported), else the rule over this dialogue's own segments, when the user did not hear it all.
   */
  playbackAck(utteranceId: string, playedMs: number, final: boolean, heard?: string): void {
    const u = this.recent.get(utteranceId);
    if (!u || !final || u.finished === null) return;
    if (heard !== undefined) {
      this.keepHeard(u, heard);
      return;
    }
    const totalMs = u.segments.reduce((n, s) => n + s.durationMs, 0);
    if (u.finished === 'interrupted' || playedMs + 50 < totalMs) this.keepHeard(u, heardText(u.segments, playedMs));
  }

  /** The client stopped playback: drop the rest of the current utterance without a step report. */
  cancelResponse(): void {
    if (this.current) this.finish(this.current, 'interrupted');
  }

  close(): void {
    this.closed = true;
    this.current = null;
    this.inputs.clear();
  }

  private applyVerdict(burst: Burst, verdict: Interruption): void {
    burst.judged = true;
    this.judged(burst, verdict);
    if (!this.speaking) return;
    if (verdict.action === 'continue') this.noteContinue(verdict);
    else {
      this.voice.learnLevel(burst.levelDb);
      this.stop(verdict);
    }
  }

  /** Whether the assistant is speaking now, as the user hears it. */
  protected get speaking(): boolean {
    return this.current !== null || (this.audible && !this.outcome.stopped);
  }

  /** This step's interruption verdict so far (a responder may sharpen it, e.g. make it cancel work). */
  protected get interruption(): Interruption | undefined {
    return this.outcome.interruption;
  }

  protected set interruption(verdict: Interruption) {
    this.outcome.interruption = verdict;
  }

  /** Remembers an utterance so playback acknowledgements find it. */
  protected remember(u: U): U {
    this.recent.set(u.id, u);
    if (this.recent.size > RECENT_UTTERANCES) this.recent.delete(this.recent.keys().next().value as string);
    return u;
  }

  protected utterance(id: string): U | undefined {
    return this.recent.get(id);
  }

  protected noteContinue(verdict: Interruption): void {
    if (!this.outcome.interruption) this.outcome.interruption = verdict;
  }

  /** Stops what the user hears now; `dropQueued` also drops what the responder had queued (see `stopping`). */
  protected stop(verdict: Interruption, dropQueued = true): void {
    this.stopping(dropQueued);
    const outcome = this.outcome;
    if (outcome.stopped) {
      if (!outcome.interruption || outcome.interruption.action === 'continue') outcome.interruption = verdict;
      return;
    }
    outcome.interruption = verdict;
    const u = this.current;
    if (u) {
      outcome.stopped = { utteranceId: u.id, wasCurrent: true, chunkSeq: u.chunkSeq };
      this.finish(u, 'interrupted');
    } else outcome.stopped = { utteranceId: this.last?.id ?? null, wasCurrent: false, chunkSeq: 0 };
  }

  protected finish(u: U, how: 'completed' | 'interrupted'): void {
    if (u.finished !== null) return;
    u.finished = how;
    if (this.current === u) this.current = null;
    this.finished(u, how, how === 'completed' ? u.fullText : heardText(u.segments, u.emittedMs));
  }

  // ---- the responder --------------------------------------------------------------------------

  /** Before inputs are taken; may throw to fail this step (an endpoint failure since the last one). */
  protected beforeStep(): void {}
  /**
   * Whether the trained overlap head may judge this session's overlaps: it was trained on sessions
   * that hear words and whose user has spoken to the assistant before (a foreground level is
   * known); elsewhere its inputs are unlike anything it saw, and the v1 rules judge.
   */
  get overlapHeadApplies(): boolean {
    return this.voice.foregroundDb !== null && this.hearsWords();
  }

  private hearsWords(): boolean {
    return this.wordSource?.available ?? false;
  }

  /** The recogniser's latest partial hypothesis, for the overlap head's word cues. */
  private partialWords(): PartialWords {
    return this.wordSource?.words ?? { text: '', score: Number.NaN };
  }
  /** The step's audio after voice activity was updated. */
  protected perceived(_plan: DialogueStepPlan, _voice: VoiceUpdate, _wasInSpeech: boolean): void {}
  /** Typed text, or a client's transcript, in input order. */
  protected abstract hear(text: string): void;
  /** A restored conversation item joins the context as if it had happened (nothing is said for it). */
  protected abstract restored(entry: ContextEntry): void;
  /** An overlap verdict was given on `burst`. */
  protected judged(_burst: Burst, _verdict: Interruption): void {}
  /** Every input and verdict of the step was handled. */
  protected listened(_plan: DialogueStepPlan, _voice: VoiceUpdate): void {}
  /** True when this step must end as it is (e.g. it closes a failed utterance). */
  protected holdsStep(_out: OutputStep): boolean {
    return false;
  }
  /** The utterance to start now, or null to stay quiet. */
  protected abstract nextUtterance(): U | null;
  /** The synthesis of `u` while its speech is not ready yet; null when it is ready (or failed). */
  protected pendingSpeech(_u: U): Promise<unknown> | null {
    return null;
  }

  /** The utterance starts on `out`: the responder adds what it carries (continues, speaksPrefill…). */
  protected starting(_u: U, _out: OutputStep): void {}
  /** A new prefill (de-duplicated, reserved tags removed). */
  protected abstract prefilled(text: string, request: PrefillRequest): void;
  /** A stop is under way; drop what was queued when `dropQueued`. */
  protected stopping(_dropQueued: boolean): void {}
  /** The utterance finished; `heard` is what the context keeps of it for now. */
  protected abstract finished(u: U, how: 'completed' | 'interrupted', heard: string): void;
  /** The context keeps exactly `heard` of the utterance. */
  protected abstract keepHeard(u: U, heard: string): void;
}
