import {
  concatPcm,
  type OutputStep,
  type PrefillAck,
  type PrefillRequest,
  type StepRequest,
  stripReservedTags,
  toVenusError,
  type VenusError,
} from '@venus/protocol';
import { type Interruption, isBackgroundLevel, judgeOverlap } from '../../reference-model/audio-overlap.ts';
import { readOverlap } from '../../reference-model/intents.ts';
import { visibleText } from '../../reference-model/replies.ts';
import type { Burst } from '../../reference-model/voice-activity.ts';
import { VoiceActivity } from '../../reference-model/voice-activity.ts';
import { chatRequestMessages } from './cascade-prompt.ts';
import { CascadeReply, type Turn } from './cascade-reply.ts';
import { type CascadeBackends, type ChatMessage, RequestAborted } from './openai-endpoints.ts';
import { TurnCapture } from './turn-capture.ts';

export interface CascadeDialogueOptions {
  sessionId: string;
  incarnation: number;
  voice?: string;
  instructions?: string;
  systemPrompt?: string;
  backends: CascadeBackends;
}

/** The inputs a step consumed, and the VAD frames it needs scored before it can finish. */
export interface CascadeStepPlan {
  request: StepRequest;
  frames: Float32Array[];
  audio: Int16Array[];
  texts: string[];
  audioMs: number;
}

interface StepOutcome {
  interruption?: Interruption;
  stopped?: { utteranceId: string | null; wasCurrent: boolean; chunkSeq: number };
}

/** Bursts with less speech than this (a click, a cough) are not turns. */
const MIN_TURN_SPEECH_MS = 150;
const RECENT_REPLIES = 64;
const PREFILL_IDS = 512;
const HISTORY_MESSAGES = 200;

/**
 * One session of the cascade port: our VAD and overlap rules in front of speech-to-text, a chat
 * model and text-to-speech. The end of a user burst (500 ms of silence) is the end of a turn: its
 * audio is transcribed, the transcript goes to the chat model with the context, the streamed raw
 * text is passed through step by step (the host hides the delegate span), and each finished
 * sentence is synthesised and paced out one chunk per step. Typed text skips transcription; a
 * prefilled `<backend>` result in `speak` mode becomes a turn of its own. Speech over the
 * assistant follows the reference model's v1 rules: sustained speech discards the reply and aborts
 * its requests, short bursts are backchannels. Endpoint failures surface as one failed step.
 *
 * @example
 *   const d = new CascadeDialogue({ sessionId: 's1', incarnation: 0, backends: new OpenAiEndpoints(config) });
 *   d.appendText(1, 'what is the weather in Paris');
 *   const plan = d.beginStep({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   const out = d.finishStep(plan, await vad.run(plan.frames.map(() => d.voice.stream), plan.frames));
 */
export class CascadeDialogue {
  readonly voice = new VoiceActivity();
  private readonly capture = new TurnCapture();
  private readonly idPrefix: string;
  private inputs: { inputSeq: number; audio?: Int16Array; text?: string }[] = [];
  private turns: Turn[] = [];
  private reply: CascadeReply | null = null;
  private last: CascadeReply | null = null;
  private readonly recent = new Map<string, CascadeReply>();
  private readonly history: ChatMessage[] = [];
  private readonly prefills = new Set<string>();
  /** Overlapping bursts judged a bid for the floor: their speech is the user's next turn. */
  private readonly floorTaken = new WeakSet<Burst>();
  private parked: string | null = null;
  private failure: VenusError | null = null;
  private stepSeq = 0;
  private replyCount = 0;
  private lastAtMs: number | null = null;
  private closed = false;

  constructor(private readonly options: CascadeDialogueOptions) {
    this.idPrefix = options.incarnation === 0 ? 'utt_' : `utt_${options.incarnation}_`;
  }

  /** What the chat model sees of the conversation (without the system prompt). */
  get context(): readonly ChatMessage[] {
    return this.history;
  }

  appendAudio(inputSeq: number, pcm: Int16Array): void {
    this.inputs.push({ inputSeq, audio: pcm });
  }

  appendText(inputSeq: number, text: string): void {
    this.inputs.push({ inputSeq, text });
  }

  /**
   * Consumes the inputs up to the cutoff. An endpoint failure since the last step fails this step
   * instead, leaving the inputs for the next one.
   */
  beginStep(request: StepRequest): CascadeStepPlan {
    if (this.failure) {
      const failure = this.failure;
      this.failure = null;
      throw failure;
    }
    const texts: string[] = [];
    const audio: Int16Array[] = [];
    let audioMs = 0;
    let taken = 0;
    for (const input of this.inputs) {
      if (input.inputSeq > request.inputSeqCutoff) break;
      taken += 1;
      if (input.audio) {
        this.voice.push(input.audio);
        audio.push(input.audio);
        audioMs += input.audio.length / 16;
      } else if (input.text !== undefined) {
        texts.push(input.text);
      }
    }
    this.inputs = this.inputs.slice(taken);
    return { request, frames: this.voice.takeFrames(), audio, texts, audioMs };
  }

  finishStep(plan: CascadeStepPlan, probabilities: Float32Array): OutputStep {
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
    const speaking = () => this.isSpeaking() || (request.assistantAudible && !outcome.stopped);

    const wasInSpeech = this.voice.inSpeech;
    const voice = this.voice.update(probabilities, plan.frames, speaking());
    const ended = voice.milestones.filter((m) => m.at === 'ended').map((m) => m.burst);
    this.capture.add(concatPcm(plan.audio), wasInSpeech || this.voice.inSpeech || ended.length > 0);
    for (const text of plan.texts) this.handleText(text, speaking(), outcome);
    for (const milestone of voice.milestones) {
      const verdict = judgeOverlap(milestone, this.voice.foregroundDb);
      if (!verdict) continue;
      milestone.burst.judged = true;
      if (verdict.action !== 'continue') this.floorTaken.add(milestone.burst);
      if (!speaking()) continue;
      if (verdict.action === 'continue') this.noteContinue(verdict, outcome);
      else {
        this.voice.learnLevel(milestone.burst.levelDb);
        this.stop(verdict, outcome);
      }
    }
    const burst = ended.at(-1);
    if (burst) {
      const pcm = this.capture.finish();
      // A new burst began within this same step: its audio starts the next capture.
      if (this.voice.inSpeech) this.capture.add(concatPcm(plan.audio), true);
      if (pcm && this.isTurn(burst)) this.userSpoke(pcm);
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
    const failed = this.reply?.failure ? this.reply : null;
    // It failed during this step: the next step reports the failure, the one after closes the reply.
    if (failed && this.failure === failed.failure) return out;
    if (failed) {
      // The failure was reported by a failed step; close what the host saw of this reply.
      this.finishReply(failed, 'interrupted');
      if (failed.started) {
        out.utteranceId = failed.id;
        out.audioChunkSeq = failed.chunkSeq;
        out.turnFinished = true;
        out.finishReason = 'interrupted';
        return out;
      }
    }
    while (this.reply?.nothingToSay && !this.reply.started) this.finishReply(this.reply, 'completed');
    const r = this.reply ?? this.nextReply();
    // Nothing to say yet, or the user is talking: the assistant does not start over them.
    if (!r || (!r.started && (!r.hasOutput || this.userHoldsFloor()))) return out;
    this.emit(r, out, Math.round(chunkMs * 24));
    return out;
  }

  prefill(request: PrefillRequest): PrefillAck {
    if (this.prefills.has(request.attemptId)) return { attemptId: request.attemptId, deduplicated: true };
    this.prefills.add(request.attemptId);
    if (this.prefills.size > PREFILL_IDS) this.prefills.delete(this.prefills.values().next().value as string);
    const text = stripReservedTags(request.text).replace(/\s+/g, ' ').trim();
    if (text) {
      this.note({ role: 'user', content: `<backend>${text}</backend>` });
      if (request.mode === 'speak') this.turns.push({ kind: 'backend', attemptId: request.attemptId });
    }
    return { attemptId: request.attemptId, deduplicated: false };
  }

  playbackAck(utteranceId: string, playedMs: number, final: boolean): void {
    const r = this.recent.get(utteranceId);
    if (!r || !final || r.finished === null) return;
    if (r.finished === 'interrupted' || playedMs + 50 < r.durationMs) this.setHeard(r, r.heardText(playedMs));
  }

  /** The host parked the rest of an utterance: the model may offer to come back to it. */
  park(_planId: string, remainder: string): void {
    const text = stripReservedTags(visibleText(remainder));
    if (text) this.parked = text;
  }

  /** The client stopped playback: drop the current reply without a step report. */
  cancelResponse(): void {
    if (this.reply) this.finishReply(this.reply, 'interrupted');
  }

  close(): void {
    this.closed = true;
    this.reply?.abort();
    this.reply = null;
    this.turns = [];
    this.inputs = [];
    this.capture.reset();
  }

  // ---- turns -----------------------------------------------------------------------------------

  private isSpeaking(): boolean {
    return this.reply?.started === true && this.reply.finished === null;
  }

  /** The user is speaking, loud enough to be talking to the assistant (a TV in the background does not hold it back). */
  private userHoldsFloor(): boolean {
    const burst = this.voice.activeBurst;
    return burst !== null && !isBackgroundLevel(burst.levelDb, this.voice.foregroundDb);
  }

  private isTurn(burst: Burst): boolean {
    if (burst.overlapped) return this.floorTaken.has(burst);
    return burst.speechMs >= MIN_TURN_SPEECH_MS && !isBackgroundLevel(burst.levelDb, this.voice.foregroundDb);
  }

  private userSpoke(pcm: Int16Array): void {
    const pending = this.reply;
    if (pending && !pending.started && pending.turn.kind === 'speech') {
      // The user went on after a pause before the reply began: one turn, one reply, transcribed again as a whole.
      this.finishReply(pending, 'interrupted');
      if (pending.userEntry) this.unnote(pending.userEntry);
      this.turns.unshift({ kind: 'speech', pcm16k: concatPcm([pending.turn.pcm16k, pcm]) });
      return;
    }
    this.turns.push({ kind: 'speech', pcm16k: pcm });
  }

  private handleText(text: string, speaking: boolean, outcome: StepOutcome): void {
    const reading = readOverlap(text);
    if (speaking && reading === 'backchannel') {
      this.noteContinue({ action: 'continue', cause: 'backchannel', cancelsWork: false }, outcome);
      return;
    }
    // The typed words explain the speech burst that carries them, which is then not judged or transcribed.
    this.voice.claimFloor();
    this.capture.discardUntilEnd();
    if (speaking) {
      this.stop({ action: 'discard', cause: 'interruption', cancelsWork: reading === 'cancel' }, outcome);
      if (reading === 'cancel' || reading === 'stop') {
        this.note({ role: 'user', content: text });
        return;
      }
    }
    this.turns.push({ kind: 'text', text });
  }

  private nextReply(): CascadeReply | null {
    const turn = this.turns.shift();
    if (!turn || this.closed) return null;
    this.replyCount += 1;
    const r = new CascadeReply(`${this.idPrefix}${this.replyCount}`, turn);
    this.reply = r;
    this.recent.set(r.id, r);
    if (this.recent.size > RECENT_REPLIES) this.recent.delete(this.recent.keys().next().value as string);
    void this.run(r);
    return r;
  }

  /** Transcribe (for speech), then stream the chat model's reply and synthesise it sentence by sentence. */
  private async run(r: CascadeReply): Promise<void> {
    const { backends } = this.options;
    try {
      let userText: string | null = null;
      if (r.turn.kind === 'speech') userText = await backends.transcribe(r.turn.pcm16k, r.signal);
      else if (r.turn.kind === 'text') userText = r.turn.text.trim();
      if (r.signal.aborted) return;
      if (userText !== null) {
        if (!userText) {
          r.nothingToSay = true;
          return;
        }
        r.userEntry = { role: 'user', content: userText };
        this.note(r.userEntry);
      }
      const messages = chatRequestMessages({
        history: this.history,
        systemPrompt: this.options.systemPrompt,
        instructions: this.options.instructions,
        parked: this.parked,
      });
      for await (const delta of backends.chat(messages, r.signal)) {
        if (r.signal.aborted) return;
        for (const sentence of r.pushText(delta)) this.synthesize(r, sentence);
      }
      if (r.signal.aborted) return;
      for (const sentence of r.endText()) this.synthesize(r, sentence);
    } catch (err) {
      this.fail(r, err);
    }
  }

  private synthesize(r: CascadeReply, sentence: string): void {
    const segment = r.addSegment(sentence);
    this.options.backends.speak(sentence, this.options.voice, r.signal).then(
      (pcm) => {
        segment.audio = pcm;
      },
      (err: unknown) => this.fail(r, err),
    );
  }

  private fail(r: CascadeReply, err: unknown): void {
    if (r.signal.aborted || err instanceof RequestAborted || r.failure || r.finished) return;
    r.failure = toVenusError(err, 'model_unavailable');
    r.abort();
    if (this.reply === r && !this.closed) this.failure = r.failure;
  }

  // ---- speaking ----------------------------------------------------------------------------------

  private emit(r: CascadeReply, out: OutputStep, chunkSamples: number): void {
    out.decision = 'speak';
    out.utteranceId = r.id;
    if (!r.started) {
      r.started = true;
      this.last = r;
      // A place in the context from the start, so results that arrive meanwhile come after it.
      r.assistantEntry = { role: 'assistant', content: '' };
      this.note(r.assistantEntry);
      if (r.turn.kind === 'backend') out.speaksPrefill = { attemptId: r.turn.attemptId };
    }
    out.text = r.nextTextDelta();
    const audio = r.takeAudio(chunkSamples);
    out.audioChunkSeq = r.chunkSeq;
    if (audio) {
      out.audio = audio;
      r.chunkSeq += 1;
    }
    if (r.done) {
      out.turnFinished = true;
      out.finishReason = 'completed';
      this.finishReply(r, 'completed');
    }
  }

  private noteContinue(verdict: Interruption, outcome: StepOutcome): void {
    if (!outcome.interruption) outcome.interruption = verdict;
  }

  /** Stops what the user hears now, cancels its requests and drops queued turns other than backend results. */
  private stop(verdict: Interruption, outcome: StepOutcome): void {
    this.turns = this.turns.filter((t) => t.kind === 'backend');
    if (outcome.stopped) {
      if (!outcome.interruption || outcome.interruption.action === 'continue') outcome.interruption = verdict;
      return;
    }
    outcome.interruption = verdict;
    const r = this.reply;
    if (r?.started && r.finished === null) {
      outcome.stopped = { utteranceId: r.id, wasCurrent: true, chunkSeq: r.chunkSeq };
      this.finishReply(r, 'interrupted');
      return;
    }
    // Still being prepared: the user has moved on, unless it speaks a backend result.
    if (r && r.turn.kind !== 'backend') this.finishReply(r, 'interrupted');
    outcome.stopped = { utteranceId: this.last?.id ?? null, wasCurrent: false, chunkSeq: 0 };
  }

  private finishReply(r: CascadeReply, how: 'completed' | 'interrupted'): void {
    if (this.reply === r) this.reply = null;
    if (r.finished !== null) return;
    r.finished = how;
    r.abort();
    if (!r.started) return;
    this.setHeard(r, how === 'completed' ? r.heardText(Number.POSITIVE_INFINITY) : r.heardText(r.emittedMs));
    if (how === 'completed') this.parked = null;
  }

  // ---- context -----------------------------------------------------------------------------------

  private note(entry: ChatMessage): void {
    if (this.closed) return;
    this.history.push(entry);
    if (this.history.length > HISTORY_MESSAGES) this.history.splice(0, this.history.length - HISTORY_MESSAGES);
  }

  private unnote(entry: ChatMessage): void {
    const at = this.history.indexOf(entry);
    if (at >= 0) this.history.splice(at, 1);
  }

  private setHeard(r: CascadeReply, heard: string): void {
    const entry = r.assistantEntry;
    if (!entry) return;
    entry.content = r.contextText(heard);
    if (!entry.content) this.unnote(entry);
    else if (!this.history.includes(entry)) this.note(entry);
  }
}
