import {
  type OutputStep,
  type PrefillAck,
  type PrefillRequest,
  type StepRequest,
  stripReservedTags,
} from '@venus/protocol';
import { type Interruption, judgeOverlap } from './audio-overlap.ts';
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
  FALLBACK_REPLY,
  GREETING_REPLY,
  RESUME_DECLINED,
  RESUME_OFFER,
  repairReply,
  replyTo,
  visibleText,
} from './replies.ts';
import { Utterance, type UtteranceRole, type UtteranceSpec } from './utterance.ts';
import { VoiceActivity } from './voice-activity.ts';

export type Synthesize = (text: string, voice: string) => Promise<Int16Array>;

export interface DialogueSessionOptions {
  sessionId: string;
  incarnation: number;
  voice?: string;
  synthesize: Synthesize;
}

/** The inputs a step consumed, and the VAD frames it needs scored before it can finish. */
export interface StepPlan {
  request: StepRequest;
  frames: Float32Array[];
  texts: string[];
  audioMs: number;
}

export interface TranscriptEntry {
  role: 'user' | 'assistant' | 'backend';
  text: string;
  utteranceId?: string;
}

interface ParkedPlan {
  planId: string;
  remainder: string;
  /** The answer after which the resume offer is made; null once offered. */
  offerAfter: string | null;
}

interface StepOutcome {
  interruption?: Interruption;
  stopped?: { utteranceId: string | null; wasCurrent: boolean; chunkSeq: number };
}

const RECENT_UTTERANCES = 64;
const RESUMABLE_ROLES: ReadonlySet<UtteranceRole> = new Set(['answer', 'repair', 'backend', 'resume']);
const TRANSCRIPT_ENTRIES = 200;
const PREFILL_IDS = 512;

function isRequest(u: Understanding): u is RequestIntent {
  return u.kind === 'weather' || u.kind === 'time' || u.kind === 'calc';
}

/** mulberry32: a tiny deterministic generator, seeded per session so text splits are reproducible. */
function seededDraw(seedText: string): () => number {
  let seed = 2166136261;
  for (let i = 0; i < seedText.length; i++) seed = Math.imul(seed ^ seedText.charCodeAt(i), 16777619);
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One session of the reference model: its inputs, voice activity, dialogue state (what it is
 * saying, what it will say next, a parked plan) and a transcript that keeps only what the user heard.
 * Content comes from typed text; audio drives voice activity and barge-in. A step is two halves so
 * that the worker can batch the VAD of many sessions between them: `beginStep` consumes the inputs
 * up to the cutoff and returns the frames to score; `finishStep` takes their probabilities and
 * returns the output step. Speech is paced: at most one chunk (the time since the previous step)
 * of 24 kHz audio per step. Synthesis is asynchronous; a step never waits for it.
 *
 * @example
 *   const d = new DialogueSession({ sessionId: 's1', incarnation: 0, synthesize });
 *   d.appendText(1, 'what is the weather in Paris');
 *   const plan = d.beginStep({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   const out = d.finishStep(plan, await vad.run(plan.frames.map(() => d.voice.stream), plan.frames));
 */

/** Said after a cancel that arrives once the assistant has stopped talking. */
const CANCELLED_REPLY = 'Okay, I have cancelled that.';

/** The plain-language status request the model delegates; the session host answers it from work state. */
const STATUS_QUERY = 'What is the status of my pending requests?';

export class DialogueSession {
  readonly voice = new VoiceActivity();
  private readonly voiceName: string;
  private readonly draw: () => number;
  private readonly idPrefix: string;
  private inputs: { inputSeq: number; audio?: Int16Array; text?: string }[] = [];
  private current: Utterance | null = null;
  private queue: Utterance[] = [];
  private last: Utterance | null = null;
  private readonly recent = new Map<string, Utterance>();
  private readonly prefills = new Set<string>();
  private readonly entries: TranscriptEntry[] = [];
  private plan: ParkedPlan | null = null;
  private offeredPlanId: string | null = null;
  private parkAnswerId: string | null = null;
  private awaitingCityFor: 'weather' | 'time' | null = null;
  private stepSeq = 0;
  private utteranceCount = 0;
  private lastAtMs: number | null = null;
  private closed = false;

  constructor(private readonly options: DialogueSessionOptions) {
    this.voiceName = options.voice ?? 'en-us';
    this.draw = seededDraw(`${options.sessionId}#${options.incarnation}`);
    this.idPrefix = options.incarnation === 0 ? 'utt_' : `utt_${options.incarnation}_`;
  }

  /** What the model's context keeps of the conversation: user text, backend results, heard speech. */
  get transcript(): readonly TranscriptEntry[] {
    return this.entries;
  }

  appendAudio(inputSeq: number, pcm: Int16Array): void {
    this.inputs.push({ inputSeq, audio: pcm });
  }

  appendText(inputSeq: number, text: string): void {
    this.inputs.push({ inputSeq, text });
  }

  beginStep(request: StepRequest): StepPlan {
    const texts: string[] = [];
    let audioMs = 0;
    let taken = 0;
    for (const input of this.inputs) {
      if (input.inputSeq > request.inputSeqCutoff) break;
      taken += 1;
      if (input.audio) {
        this.voice.push(input.audio);
        audioMs += input.audio.length / 16;
      } else if (input.text !== undefined) {
        texts.push(input.text);
      }
    }
    this.inputs = this.inputs.slice(taken);
    return { request, frames: this.voice.takeFrames(), texts, audioMs };
  }

  finishStep(plan: StepPlan, probabilities: Float32Array): OutputStep {
    const { request } = plan;
    this.stepSeq += 1;
    const chunkMs =
      this.lastAtMs === null
        ? plan.audioMs > 0
          ? plan.audioMs
          : 1000
        : Math.min(10_000, Math.max(0, request.atMs - this.lastAtMs));
    this.lastAtMs = request.atMs;
    const outcome: StepOutcome = {};
    const speaking = () => this.current !== null || (request.assistantAudible && !outcome.stopped);

    const voice = this.voice.update(probabilities, plan.frames, speaking());
    // Words first: a transcript explains the speech burst that carries it, which is then not judged again.
    for (const text of plan.texts) this.handleText(text, speaking(), outcome);
    for (const milestone of voice.milestones) {
      const verdict = judgeOverlap(milestone, this.voice.foregroundDb);
      if (!verdict) continue;
      milestone.burst.judged = true;
      if (!speaking()) continue;
      if (verdict.action === 'continue') this.noteContinue(verdict, outcome);
      else {
        this.voice.learnLevel(milestone.burst.levelDb);
        this.stop(verdict, outcome, true);
      }
    }

    const out: OutputStep = {
      stepSeq: this.stepSeq,
      chunk: request.chunk,
      inputSeqCutoff: request.inputSeqCutoff,
      decision: 'listen',
      text: '',
      utteranceId: null,
      audio: null,
      audioChunkSeq: 0,
      turnFinished: false,
    };
    if (voice.event) out.userSpeech = voice.event;
    if (outcome.interruption) out.interruption = outcome.interruption;
    if (outcome.stopped) {
      // The stopped utterance closes on this step; whatever follows starts on the next one.
      out.utteranceId = outcome.stopped.utteranceId;
      out.audioChunkSeq = outcome.stopped.chunkSeq;
      if (outcome.stopped.wasCurrent) {
        out.turnFinished = true;
        out.finishReason = 'interrupted';
      }
      return out;
    }
    if (!this.current) this.current = this.queue.shift() ?? null;
    const u = this.current;
    if (!u) return out;
    this.emit(u, out, Math.round(chunkMs * 24));
    return out;
  }

  prefill(request: PrefillRequest): PrefillAck {
    if (this.prefills.has(request.attemptId)) return { attemptId: request.attemptId, deduplicated: true };
    this.prefills.add(request.attemptId);
    if (this.prefills.size > PREFILL_IDS) this.prefills.delete(this.prefills.values().next().value as string);
    const text = stripReservedTags(request.text).replace(/\s+/g, ' ').trim();
    if (request.mode === 'speak' && text) {
      this.enqueue({ text, role: 'backend', speaksPrefill: { attemptId: request.attemptId } });
    } else if (text) {
      this.note({ role: 'backend', text });
    }
    return { attemptId: request.attemptId, deduplicated: false };
  }

  playbackAck(utteranceId: string, playedMs: number, final: boolean): void {
    const u = this.recent.get(utteranceId);
    if (!u || !final || u.finished === null) return;
    const total = u.durationMs;
    if (u.finished === 'interrupted' || (total !== null && playedMs + 50 < total)) {
      this.setHeard(u, u.heardText(playedMs));
    }
  }

  park(planId: string, remainder: string): void {
    const text = stripReservedTags(visibleText(remainder));
    if (!text) return;
    const answer = this.parkAnswerId ? this.recent.get(this.parkAnswerId) : undefined;
    const waiting = answer !== undefined && answer.finished === null;
    this.plan = { planId, remainder: text, offerAfter: waiting ? answer.id : null };
    if (!waiting) this.offer();
  }

  /** The client stopped playback: drop the rest of the current utterance without a step report. */
  cancelResponse(): void {
    const u = this.current;
    if (!u) return;
    this.current = null;
    this.finish(u, 'interrupted');
  }

  close(): void {
    this.closed = true;
    this.queue = [];
    this.current = null;
    this.inputs = [];
  }

  // ---- understanding ---------------------------------------------------------------------------

  private handleText(text: string, speaking: boolean, outcome: StepOutcome): void {
    this.note({ role: 'user', text });
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
    if (speaking) this.handleOverlap(text, outcome);
    else if (readOverlap(text) === 'cancel') {
      // "Never mind" after the assistant already stopped (a voice barge-in usually stops it before
      // the transcript arrives): nothing to stop, but the work of the last turn is still cancelled.
      if (!outcome.interruption || outcome.interruption.action === 'continue')
        outcome.interruption = { action: 'discard', cause: 'interruption', cancelsWork: true };
      else outcome.interruption = { ...outcome.interruption, cancelsWork: true };
      this.enqueue({ text: CANCELLED_REPLY, role: 'other' });
    } else this.handleRequest(text);
  }

  private handleOverlap(text: string, outcome: StepOutcome): void {
    const reading = readOverlap(text);
    if (reading === 'backchannel') {
      this.noteContinue({ action: 'continue', cause: 'backchannel', cancelsWork: false }, outcome);
      return;
    }
    if (reading === 'cancel' || reading === 'stop') {
      this.stop({ action: 'discard', cause: 'interruption', cancelsWork: reading === 'cancel' }, outcome, true);
      return;
    }
    const target = this.current ?? this.last;
    // Only substantive speech is worth repairing or resuming; greetings and offers are just dropped.
    const resumable = target !== null && RESUMABLE_ROLES.has(target.spec.role);
    if (reading === 'correction' && resumable && target.spec.intent) {
      const slot = correctionSlot(text, target.spec.intent.kind);
      if (slot) {
        this.stop({ action: 'repair', cause: 'interruption', cancelsWork: true }, outcome, false);
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
      this.stop({ action: 'park', cause: 'interruption', cancelsWork: false }, outcome, false);
      this.parkAnswerId = this.enqueue(
        { text: replyTo(understanding), role: 'answer', intent: understanding },
        true,
      ).id;
      return;
    }
    // The user took the floor with something else: stop, then answer it like any request.
    this.stop({ action: 'discard', cause: 'interruption', cancelsWork: false }, outcome, true);
    this.handleRequest(text, understanding);
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
      case 'unknown':
        // A lone "okay" after the assistant finished needs no answer.
        if (readOverlap(text) !== 'backchannel') this.enqueue({ text: FALLBACK_REPLY, role: 'other' });
        return;
    }
  }

  // ---- speaking ----------------------------------------------------------------------------------

  private emit(u: Utterance, out: OutputStep, chunkSamples: number): void {
    out.decision = 'speak';
    out.utteranceId = u.id;
    if (!u.started) {
      u.started = true;
      this.last = u;
      if (u.spec.continues) out.continues = u.spec.continues;
      if (u.spec.resumeOffer) out.resumeOffer = u.spec.resumeOffer;
      if (u.spec.speaksPrefill) out.speaksPrefill = u.spec.speaksPrefill;
    }
    out.text = u.nextTextDelta(this.draw);
    const audio = u.takeAudio(chunkSamples);
    out.audioChunkSeq = u.chunkSeq;
    if (audio) {
      out.audio = audio;
      u.chunkSeq += 1;
    }
    if (u.speechDone) {
      out.text += u.restText();
      out.turnFinished = true;
      out.finishReason = 'completed';
      this.current = null;
      this.finish(u, 'completed');
    }
  }

  private enqueue(spec: UtteranceSpec, front = false): Utterance {
    this.utteranceCount += 1;
    const u = new Utterance(`${this.idPrefix}${this.utteranceCount}`, spec);
    this.recent.set(u.id, u);
    if (this.recent.size > RECENT_UTTERANCES) this.recent.delete(this.recent.keys().next().value as string);
    if (front) this.queue.unshift(u);
    else this.queue.push(u);
    if (spec.resumeOffer) this.offeredPlanId = spec.resumeOffer.planId;
    this.options.synthesize(u.visible, this.voiceName).then(
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

  private finish(u: Utterance, how: 'completed' | 'interrupted'): void {
    u.finished = how;
    this.setHeard(u, how === 'completed' ? u.visible : u.heardText(u.emittedMs));
    if (how === 'completed' && this.plan?.offerAfter === u.id) this.offer();
  }

  private noteContinue(verdict: Interruption, outcome: StepOutcome): void {
    if (!outcome.interruption) outcome.interruption = verdict;
  }

  /** Stops what the user hears now; `dropQueued` also drops queued speech other than backend results. */
  private stop(verdict: Interruption, outcome: StepOutcome, dropQueued: boolean): void {
    if (dropQueued) {
      if (this.queue.some((q) => q.spec.role === 'offer')) this.offeredPlanId = null;
      this.queue = this.queue.filter((q) => q.spec.role === 'backend');
    }
    if (outcome.stopped) {
      if (!outcome.interruption || outcome.interruption.action === 'continue') outcome.interruption = verdict;
      return;
    }
    outcome.interruption = verdict;
    const u = this.current;
    if (u) {
      this.current = null;
      outcome.stopped = { utteranceId: u.id, wasCurrent: true, chunkSeq: u.chunkSeq };
      this.finish(u, 'interrupted');
    } else {
      outcome.stopped = { utteranceId: this.last?.id ?? null, wasCurrent: false, chunkSeq: 0 };
    }
  }

  // ---- transcript --------------------------------------------------------------------------------

  private note(entry: TranscriptEntry): void {
    if (this.closed) return;
    this.entries.push(entry);
    if (this.entries.length > TRANSCRIPT_ENTRIES) this.entries.splice(0, this.entries.length - TRANSCRIPT_ENTRIES);
  }

  private setHeard(u: Utterance, text: string): void {
    const entry = this.entries.find((e) => e.utteranceId === u.id);
    if (entry) entry.text = text;
    else this.note({ role: 'assistant', text, utteranceId: u.id });
  }
}
