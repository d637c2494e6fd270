import {
  type ContextEntry,
  concatPcm,
  type OutputStep,
  type PrefillRequest,
  stripReservedTags,
  toVenusError,
  type VenusError,
} from '@venus/protocol';
import { ContextLog } from '../../duplex-dialogue/context-log.ts';
import { type DialogueStepPlan, DuplexDialogue } from '../../duplex-dialogue/duplex-dialogue.ts';
import { closeUtterance } from '../../duplex-dialogue/output-step.ts';
import { type Interruption, isBackgroundLevel } from '../../perception/overlap-policy.ts';
import type { Burst, VoiceUpdate } from '../../perception/voice-activity.ts';
import { readOverlap } from '../../reference-model/intents.ts';
import { visibleText } from '../../reference-model/replies.ts';
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
export type CascadeStepPlan = DialogueStepPlan;

/** Bursts with less speech than this (a click, a cough) are not turns. */
const MIN_TURN_SPEECH_MS = 150;
const HISTORY_MESSAGES = 200;
const RESTORED_INSTRUCTIONS = 16;

/**
 * One session of the cascade port: the duplex dialogue core (our VAD and overlap rules) with a
 * responder made of speech-to-text, a chat model and text-to-speech. The end of a user burst
 * (500 ms of silence) is the end of a turn: its audio is transcribed, the transcript goes to the
 * chat model with the context, the streamed raw text is passed through step by step (the host hides
 * the delegate span), and each finished sentence is synthesised and paced out one chunk per step.
 * Typed text skips transcription; a prefilled `<backend>` result in `speak` mode becomes a turn of
 * its own. Speech over the assistant follows the reference model's v1 rules: sustained speech
 * discards the reply and aborts its requests, short bursts are backchannels. Endpoint failures
 * surface as one failed step.
 *
 * @example
 *   const d = new CascadeDialogue({ sessionId: 's1', incarnation: 0, backends: new OpenAiEndpoints(config) });
 *   d.appendText(1, 'what is the weather in Paris');
 *   const plan = d.beginStep({ chunk: 0, inputSeqCutoff: 1, atMs: 160, assistantAudible: false });
 *   const out = d.finishStep(plan, await vad.run(plan.frames.map(() => d.voice.stream), plan.frames));
 */
export class CascadeDialogue extends DuplexDialogue<CascadeReply> {
  private readonly capture = new TurnCapture();
  private turns: Turn[] = [];
  /** The reply being prepared (transcription, chat) before it starts. */
  private pending: CascadeReply | null = null;
  private readonly history = new ContextLog<ChatMessage>(HISTORY_MESSAGES);
  /** Overlapping bursts judged a bid for the floor: their speech is the user's next turn. */
  private readonly floorTaken = new WeakSet<Burst>();
  private parked: string | null = null;
  /** System items the client restored, after the session's instructions (bounded like the history). */
  private readonly restoredInstructions = new ContextLog<string>(RESTORED_INSTRUCTIONS);
  /** `response.create`'s instructions, for the next reply only (a later one replaces them). */
  private nextInstructions: string | null = null;
  private failure: VenusError | null = null;
  private replyCount = 0;

  constructor(private readonly options: CascadeDialogueOptions) {
    super(options);
  }

  /** What the chat model sees of the conversation (without the system prompt). */
  get context(): readonly ChatMessage[] {
    return this.history.entries;
  }

  /** The host parked the rest of an utterance: the model may offer to come back to it. */
  park(_planId: string, remainder: string): void {
    const text = stripReservedTags(visibleText(remainder));
    if (text) this.parked = text;
  }

  /** The client stopped playback: drop the current reply (or the one being prepared) without a step report. */
  override cancelResponse(): void {
    if (this.current) super.cancelResponse();
    else if (this.pending) this.drop(this.pending, 'interrupted');
  }

  override close(): void {
    this.current?.abort();
    this.pending?.abort();
    this.pending = null;
    super.close();
    this.history.closed = true;
    this.turns = [];
    this.capture.reset();
  }

  // ---- the responder --------------------------------------------------------------------------

  /** An endpoint failure since the last step fails this step instead, leaving the inputs for the next one. */
  protected override beforeStep(): void {
    if (!this.failure) return;
    const failure = this.failure;
    this.failure = null;
    throw failure;
  }

  protected override perceived(plan: DialogueStepPlan, voice: VoiceUpdate, wasInSpeech: boolean): void {
    const ended = voice.milestones.some((m) => m.at === 'ended');
    this.capture.add(concatPcm(plan.audio), wasInSpeech || this.voice.inSpeech || ended);
  }

  protected hear(text: string): void {
    const speaking = this.speaking;
    const reading = readOverlap(text);
    if (speaking && reading === 'backchannel') {
      this.noteContinue({ action: 'continue', cause: 'backchannel', cancelsWork: false });
      return;
    }
    // The typed words explain the speech burst that carries them, which is then not judged or transcribed.
    this.voice.claimFloor();
    this.capture.discardUntilEnd();
    if (speaking) {
      this.stop({ action: 'discard', cause: 'interruption', cancelsWork: reading === 'cancel' });
      if (reading === 'cancel' || reading === 'stop') {
        this.history.push({ role: 'user', content: text });
        return;
      }
    }
    this.turns.push({ kind: 'text', text });
  }

  /** Restored history: chat messages of the context; a system item joins the instructions. */
  protected restored(entry: ContextEntry): void {
    if (entry.role === 'system') this.restoredInstructions.push(entry.text);
    else if (entry.role === 'backend') this.history.push({ role: 'user', content: `<backend>${entry.text}</backend>` });
    else this.history.push({ role: entry.role, content: entry.text });
  }

  /** Instructions for the next reply only, after the session's (`response.instructions`). */
  instructNextResponse(text: string): void {
    this.nextInstructions = text;
  }

  /** The session's instructions, then the system items the client restored, in order. */
  get instructions(): string | undefined {
    const all = [this.options.instructions ?? '', ...this.restoredInstructions.entries].filter((t) => t !== '');
    return all.length === 0 ? undefined : all.join('\n');
  }

  protected override judged(burst: Burst, verdict: Interruption): void {
    if (verdict.action !== 'continue') this.floorTaken.add(burst);
  }

  protected override listened(plan: DialogueStepPlan, voice: VoiceUpdate): void {
    const burst = voice.milestones.filter((m) => m.at === 'ended').at(-1)?.burst;
    if (!burst) return;
    const pcm = this.capture.finish();
    // A new burst began within this same step: its audio starts the next capture.
    if (this.voice.inSpeech) this.capture.add(concatPcm(plan.audio), true);
    if (pcm && this.isTurn(burst)) this.userSpoke(pcm);
  }

  /** A failed reply: the step after the failed one closes what the host saw of it. */
  protected override holdsStep(out: OutputStep): boolean {
    const failed = [this.current, this.pending].find((r) => r?.failure);
    if (!failed) return false;
    // It failed during this step: the next step reports the failure, the one after closes the reply.
    if (this.failure === failed.failure) return true;
    if (!failed.started) {
      this.drop(failed, 'interrupted');
      return false;
    }
    this.finish(failed, 'interrupted');
    closeUtterance(out, failed.id, failed.chunkSeq, true);
    return true;
  }

  protected nextUtterance(): CascadeReply | null {
    if (this.pending?.nothingToSay) this.drop(this.pending, 'completed');
    const r = this.pending ?? this.nextReply();
    // Nothing to say yet, or the user is talking: the assistant does not start over them.
    if (!r?.hasOutput || this.userHoldsFloor()) return null;
    this.pending = null;
    return r;
  }

  protected override starting(r: CascadeReply, out: OutputStep): void {
    // A place in the context from the start, so results that arrive meanwhile come after it.
    r.assistantEntry = { role: 'assistant', content: '' };
    this.history.push(r.assistantEntry);
    if (r.turn.kind === 'backend') out.speaksPrefill = { attemptId: r.turn.attemptId };
  }

  protected prefilled(text: string, request: PrefillRequest): void {
    this.history.push({ role: 'user', content: `<backend>${text}</backend>` });
    if (request.mode === 'speak') this.turns.push({ kind: 'backend', attemptId: request.attemptId });
  }

  /** Cancels queued turns other than backend results, and a reply still being prepared for the user. */
  protected override stopping(): void {
    this.turns = this.turns.filter((t) => t.kind === 'backend');
    if (this.pending && this.pending.turn.kind !== 'backend') this.drop(this.pending, 'interrupted');
  }

  protected finished(r: CascadeReply, how: 'completed' | 'interrupted', heard: string): void {
    r.abort();
    this.keepHeard(r, heard);
    if (how === 'completed') this.parked = null;
  }

  protected keepHeard(r: CascadeReply, heard: string): void {
    const entry = r.assistantEntry;
    if (!entry) return;
    entry.content = r.contextText(heard);
    if (!entry.content) this.history.remove(entry);
    else if (!this.history.includes(entry)) this.history.push(entry);
  }

  // ---- turns -----------------------------------------------------------------------------------

  /** A reply that never started ends without a place in the context. */
  private drop(r: CascadeReply, how: 'completed' | 'interrupted'): void {
    if (this.pending === r) this.pending = null;
    if (r.finished !== null) return;
    r.finished = how;
    r.abort();
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
    const pending = this.pending;
    if (pending && !pending.started && pending.turn.kind === 'speech') {
      // The user went on after a pause before the reply began: one turn, one reply, transcribed again as a whole.
      this.drop(pending, 'interrupted');
      if (pending.userEntry) this.history.remove(pending.userEntry);
      this.turns.unshift({ kind: 'speech', pcm16k: concatPcm([pending.turn.pcm16k, pcm]) });
      return;
    }
    this.turns.push({ kind: 'speech', pcm16k: pcm });
  }

  private nextReply(): CascadeReply | null {
    const turn = this.turns.shift();
    if (!turn || this.closed) return null;
    this.replyCount += 1;
    const r = this.remember(new CascadeReply(`${this.idPrefix}${this.replyCount}`, turn));
    this.pending = r;
    const oneShot = this.nextInstructions;
    this.nextInstructions = null;
    void this.run(r, oneShot);
    return r;
  }

  /** Transcribe (for speech), then stream the chat model's reply and synthesise it sentence by sentence. */
  private async run(r: CascadeReply, oneShot: string | null): Promise<void> {
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
        this.history.push(r.userEntry);
      }
      const messages = chatRequestMessages({
        history: this.history.entries,
        systemPrompt: this.options.systemPrompt,
        instructions: [this.instructions, oneShot].filter((t) => t).join('\n') || undefined,
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
    if ((this.current === r || this.pending === r) && !this.closed) this.failure = r.failure;
  }
}
