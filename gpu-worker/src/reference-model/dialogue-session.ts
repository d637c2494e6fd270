import {
  type ContextEntry,
  type OutputStep,
  type PrefillRequest,
  type RecogniserStream,
  stripReservedTags,
} from '@venus/protocol';
import { ContextLog } from '../duplex-dialogue/context-log.ts';
import { type DialogueStepPlan, DuplexDialogue } from '../duplex-dialogue/duplex-dialogue.ts';
import type { Interruption } from '../perception/overlap-policy.ts';
import { UtteranceRecognition } from '../perception/utterance-recognition.ts';
import type { Burst, VoiceUpdate } from '../perception/voice-activity.ts';
import { HeardSpeech } from './heard-speech.ts';
import {
  correctionSlot,
  extractCity,
  isAffirmative,
  isNegative,
  type RequestIntent,
  readOverlap,
  type Understanding,
  understandRequest,
} from './intents.ts';
import {
  askForCity,
  CANCELLED_REPLY,
  GREETING_REPLY,
  heardCityQuestion,
  lookInto,
  RESUME_DECLINED,
  RESUME_OFFER,
  recallReply,
  repairReply,
  replyTo,
  visibleText,
} from './replies.ts';
import { seededDraw } from './seeded-draw.ts';
import { Utterance, type UtteranceRole, type UtteranceSpec } from './utterance.ts';

export type Synthesize = (text: string, voice: string) => Promise<Int16Array>;

export interface DialogueSessionOptions {
  sessionId: string;
  incarnation: number;
  voice?: string;
  synthesize: Synthesize;
  /** Opens this session's recogniser stream: the model then hears words in the user's audio itself. */
  recognise?: () => Promise<RecogniserStream>;
  /** A resumed session's context (what was said and heard before), rebuilt from its timeline. */
  history?: readonly ContextEntry[];
  /** A plan parked before the resume. */
  parked?: { planId: string; utteranceId: string; remainder: string };
}

/** The inputs a step consumed, and the VAD frames it needs scored before it can finish. */
export type StepPlan = DialogueStepPlan;

export interface TranscriptEntry {
  role: ContextEntry['role'];
  text: string;
  utteranceId?: string;
}

interface ParkedPlan {
  planId: string;
  remainder: string;
  /** The answer after which the resume offer is made; null once offered. */
  offerAfter: string | null;
}

const RESUMABLE_ROLES: ReadonlySet<UtteranceRole> = new Set(['answer', 'repair', 'backend', 'resume']);
const TRANSCRIPT_ENTRIES = 200;

function isRequest(u: Understanding): u is RequestIntent {
  return u.kind === 'weather' || u.kind === 'time' || u.kind === 'calc';
}

/**
 * One session of the reference model: the duplex dialogue core (inputs, voice activity, steps)
 * with the reference rules as its responder: dialogue state (what it will say next, a parked plan)
 * and a transcript that keeps only what the user heard. Content comes from typed text; audio drives
 * voice activity and barge-in. Speech is paced: at most one chunk (the time since the previous
 * step) of 24 kHz audio per step. Synthesis is asynchronous; a chunk step that starts an utterance waits briefly for its speech
 * (`completeStep`), no other step does.
 *
 * @example
 *   const d = new DialogueSession({ sessionId: 's1', incarnation: 0, synthesize });
 *   d.appendText(1, 'what is the weather in Paris');
 *   const plan = d.beginStep({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   const out = d.finishStep(plan, await vad.run(plan.frames.map(() => d.voice.stream), plan.frames));
 */

/** The plain-language status request the model delegates; the session host answers it from work state. */
const STATUS_QUERY = 'What is the status of my pending requests?';

export class DialogueSession extends DuplexDialogue<Utterance> {
  private readonly voiceName: string;
  private readonly draw: () => number;
  private queue: Utterance[] = [];
  private readonly entries = new ContextLog<TranscriptEntry>(TRANSCRIPT_ENTRIES);
  private plan: ParkedPlan | null = null;
  private offeredPlanId: string | null = null;
  private parkAnswerId: string | null = null;
  private awaitingCityFor: 'weather' | 'time' | null = null;
  private utteranceCount = 0;
  /** The words it hears itself (heard-speech.ts), when it has a recogniser. */
  private readonly hearing: HeardSpeech | null;

  constructor(private readonly options: DialogueSessionOptions) {
    super(options);
    this.voiceName = options.voice ?? 'en-us';
    this.draw = seededDraw(`${options.sessionId}#${options.incarnation}`);
    const recognition = options.recognise ? new UtteranceRecognition({ open: options.recognise }) : null;
    this.wordSource = recognition;
    this.hearing =
      recognition === null
        ? null
        : new HeardSpeech(recognition, this.voice, {
            speaking: () => this.speaking,
            headJudges: () => this.headJudges,
            awaitsAnswer: () => this.awaitingCityFor !== null || this.offeredPlanId !== null,
            stop: (verdict) => this.stop(verdict),
            corrects: (text) => this.repairSlot(text) !== null,
            transcripts: this.transcripts,
            hear: (text) => this.hear(text),
            heardCut: (text) => {
              this.entries.push({ role: 'user', text });
              this.handleOverlap(text);
            },
            say: (spec) => this.enqueue(spec),
          });
    this.restore(options.history ?? [], options.parked);
  }

  /**
   * Seeds the context of a resumed session: the entries as heard, and the dialogue state they
   * imply (a question for a city the user has not answered yet, a parked plan).
   */
  private restore(history: readonly ContextEntry[], parked: DialogueSessionOptions['parked']): void {
    for (const entry of history) this.restored(entry);
    if (parked) this.plan = { planId: parked.planId, remainder: parked.remainder, offerAfter: null };
  }

  /**
   * One entry of restored history (a resume, items the client restored). A system entry is kept but
   * changes nothing (the rules follow no instructions); an assistant question for a city (heard far
   * enough to tell which) awaits its answer, until a user turn takes the answer's place.
   */
  protected restored(entry: ContextEntry): void {
    this.entries.push({ role: entry.role, text: entry.text });
    if (entry.role === 'assistant') this.awaitingCityFor = heardCityQuestion(entry.text);
    else if (entry.role === 'user') this.awaitingCityFor = null;
  }

  /** What the model's context keeps of the conversation: user text, backend results, heard speech. */
  get transcript(): readonly TranscriptEntry[] {
    return this.entries.entries;
  }

  park(planId: string, remainder: string): void {
    const text = stripReservedTags(visibleText(remainder));
    if (!text) return;
    const answer = this.parkAnswerId ? this.utterance(this.parkAnswerId) : undefined;
    const waiting = answer !== undefined && answer.finished === null;
    this.plan = { planId, remainder: text, offerAfter: waiting ? answer.id : null };
    if (!waiting) this.offer();
  }

  override close(): void {
    super.close();
    this.entries.closed = true;
    this.queue = [];
    void this.hearing?.close();
  }

  // ---- hearing words -----------------------------------------------------------------------------

  protected override perceived(plan: DialogueStepPlan, voice: VoiceUpdate, wasInSpeech: boolean): void {
    this.hearing?.perceived(plan, voice, wasInSpeech);
  }

  protected override judged(_burst: Burst, verdict: Interruption): void {
    this.hearing?.judged(verdict);
  }

  protected nextUtterance(): Utterance | null {
    return this.queue.shift() ?? null;
  }

  protected override pendingSpeech(u: Utterance): Promise<unknown> | null {
    return u.audio !== null || u.audioFailed ? null : u.synthesis;
  }

  protected prefilled(text: string, request: PrefillRequest): void {
    if (request.mode === 'speak')
      this.enqueue({ text, role: 'backend', speaksPrefill: { attemptId: request.attemptId } });
    else this.entries.push({ role: 'backend', text });
  }

  protected override starting(u: Utterance, out: OutputStep): void {
    if (u.spec.continues) out.continues = u.spec.continues;
    if (u.spec.resumeOffer) out.resumeOffer = u.spec.resumeOffer;
    if (u.spec.speaksPrefill) out.speaksPrefill = u.spec.speaksPrefill;
  }

  /** Drops queued speech other than backend results. */
  protected override stopping(dropQueued: boolean): void {
    if (!dropQueued) return;
    if (this.queue.some((q) => q.spec.role === 'offer')) this.offeredPlanId = null;
    this.queue = this.queue.filter((q) => q.spec.role === 'backend');
  }

  protected finished(u: Utterance, how: 'completed' | 'interrupted', heard: string): void {
    this.keepHeard(u, heard);
    if (how === 'completed' && this.plan?.offerAfter === u.id) this.offer();
  }

  protected keepHeard(u: Utterance, text: string): void {
    const entry = this.entries.entries.find((e) => e.utteranceId === u.id);
    if (entry) entry.text = text;
    else this.entries.push({ role: 'assistant', text, utteranceId: u.id });
  }

  // ---- understanding ---------------------------------------------------------------------------

  protected hear(text: string): void {
    const speaking = this.speaking;
    this.entries.push({ role: 'user', text });
    if (readOverlap(text) !== 'backchannel') this.voice.claimFloor();
    if (this.offeredPlanId !== null) {
      const planId = this.offeredPlanId;
      const plan = this.plan;
      if (isAffirmative(text) || isNegative(text)) {
        this.offeredPlanId = null;
        this.plan = null;
        if (isAffirmative(text) && plan) this.enqueue({ text: plan.remainder, role: 'resume', continues: { planId } });
        else this.enqueue({ text: RESUME_DECLINED, role: 'other' });
        return;
      }
      // Anything else moves the conversation on: the offer lapses with its plan.
      this.offeredPlanId = null;
      this.plan = null;
    }
    if (speaking) this.handleOverlap(text);
    else if (readOverlap(text) === 'cancel') {
      // "Never mind" after the assistant already stopped (a voice barge-in usually stops it before
      // the transcript arrives): nothing to stop, but the work of the last turn is still cancelled.
      const verdict = this.interruption;
      if (!verdict || verdict.action === 'continue')
        this.interruption = { action: 'discard', cause: 'interruption', cancelsWork: true };
      else this.interruption = { ...verdict, cancelsWork: true };
      this.enqueue({ text: CANCELLED_REPLY, role: 'other' });
    } else if (readOverlap(text) === 'stop') {
      // "Stop" after the assistant already stopped: nothing more to do.
    } else this.handleRequest(text);
  }

  private handleOverlap(text: string): void {
    const reading = readOverlap(text);
    if (reading === 'backchannel') {
      this.noteContinue({ action: 'continue', cause: 'backchannel', cancelsWork: false });
      return;
    }
    if (reading === 'cancel' || reading === 'stop') {
      this.stop({ action: 'discard', cause: 'interruption', cancelsWork: reading === 'cancel' });
      return;
    }
    const target = this.current ?? this.last;
    // Only substantive speech is worth repairing or resuming; greetings and offers are just dropped.
    const resumable = target !== null && RESUMABLE_ROLES.has(target.spec.role);
    if (reading === 'correction' && target !== null) {
      const slot = this.repairSlot(text);
      if (slot) {
        this.stop({ action: 'repair', cause: 'interruption', cancelsWork: true }, false);
        const repair = this.enqueue(
          { text: repairReply(slot), role: 'repair', intent: slot, continues: { utteranceId: target.id } },
          true,
        );
        // The repair stands in for what it repairs, so a pending resume offer follows it instead.
        if (this.parkAnswerId === target.id) this.parkAnswerId = repair.id;
        if (this.plan?.offerAfter === target.id) this.plan.offerAfter = repair.id;
        return;
      }
    }
    const understanding = understandRequest(text);
    if (isRequest(understanding) && resumable) {
      this.stop({ action: 'park', cause: 'interruption', cancelsWork: false }, false);
      this.parkAnswerId = this.enqueue(
        { text: replyTo(understanding), role: 'answer', intent: understanding },
        true,
      ).id;
      return;
    }
    // The user took the floor with something else: stop, then answer it like any request.
    this.stop({ action: 'discard', cause: 'interruption', cancelsWork: false });
    this.handleRequest(text, understanding);
  }

  /**
   * The new slot `text` gives what the assistant is saying (or said last), when the words read as a
   * correction of it ("no, I meant Paris" over an answer about Rome): only substantive speech is
   * repaired. Null when they do not.
   */
  private repairSlot(text: string): RequestIntent | null {
    const target = this.current ?? this.last;
    if (target === null || !RESUMABLE_ROLES.has(target.spec.role) || !target.spec.intent) return null;
    if (readOverlap(text) !== 'correction') return null;
    return correctionSlot(text, target.spec.intent.kind);
  }

  private handleRequest(text: string, understanding = understandRequest(text)): void {
    const awaiting = this.awaitingCityFor;
    this.awaitingCityFor = null;
    if (awaiting && understanding.kind === 'unknown') {
      const city = extractCity(text, true);
      if (city) {
        const intent: RequestIntent = { kind: awaiting, city };
        this.enqueue({ text: replyTo(intent), role: 'answer', intent });
        return;
      }
    }
    switch (understanding.kind) {
      case 'weather':
      case 'time':
      case 'calc':
        this.enqueue({ text: replyTo(understanding), role: 'answer', intent: understanding });
        return;
      case 'missing_city':
        this.awaitingCityFor = understanding.for;
        this.enqueue({ text: askForCity(understanding.for), role: 'other' });
        return;
      case 'greeting':
        this.enqueue({ text: GREETING_REPLY, role: 'other' });
        return;
      case 'status':
        // The model does not track work itself: it asks, and the answer comes back as <backend>.
        this.enqueue({ text: `Let me see. <delegate>${STATUS_QUERY}</delegate>`, role: 'other' });
        return;
      case 'recall': {
        const said = this.entries.entries.findLast((e) => e.role === 'assistant' && e.text.trim() !== '')?.text;
        this.enqueue({ text: recallReply(said ?? null), role: 'other' });
        // Saying a question for a city again asks it again.
        if (said) this.awaitingCityFor = heardCityQuestion(said);
        return;
      }
      case 'unknown':
        // A lone "okay" after the assistant finished needs no answer.
        if (readOverlap(text) !== 'backchannel') this.enqueue({ text: lookInto(text), role: 'other' });
        return;
    }
  }

  // ---- speaking ----------------------------------------------------------------------------------

  private enqueue(spec: UtteranceSpec, front = false): Utterance {
    this.utteranceCount += 1;
    const u = this.remember(new Utterance(`${this.idPrefix}${this.utteranceCount}`, spec, this.draw));
    if (front) this.queue.unshift(u);
    else this.queue.push(u);
    if (spec.resumeOffer) this.offeredPlanId = spec.resumeOffer.planId;
    u.synthesis = this.options.synthesize(u.visible, this.voiceName).then(
      (pcm) => u.setAudio(pcm),
      () => {
        u.audioFailed = true;
      },
    );
    return u;
  }

  private offer(): void {
    if (!this.plan) return;
    this.plan.offerAfter = null;
    this.enqueue({ text: RESUME_OFFER, role: 'offer', resumeOffer: { planId: this.plan.planId } }, true);
  }
}
