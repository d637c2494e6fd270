import { type SpokenSegment, stripReservedTags, type VenusError } from '@venus/protocol';
import type { SpokenUtterance } from '../../duplex-dialogue/speech-pacing.ts';
import { DelegateParser } from '../../session-host/delegate-parser.ts';
import { SentenceSplitter } from './sentence-splitter.ts';

/** What a reply answers: the user's speech, typed text, or a prefilled backend result to speak. */
export type Turn =
  | { kind: 'speech'; pcm16k: Int16Array }
  | { kind: 'text'; text: string }
  | { kind: 'backend'; attemptId: string };

interface Segment {
  text: string;
  /** 24 kHz speech, once synthesised. */
  audio: Int16Array | null;
}

/**
 * One assistant utterance of a cascade session: the raw text as the language model streams it
 * (passed on to the host as is, delegate span included), the visible sentences cut from it and
 * their synthesised speech, paced out one chunk per step in sentence order. It owns the
 * AbortController of every request made for it, so stopping it cancels the chat stream and any
 * synthesis still running.
 *
 * @example
 *   const r = new CascadeReply('utt_1', { kind: 'text', text: 'hi' });
 *   for (const sentence of r.pushText('Hello there! <dele')) synthesise(r.addSegment(sentence));
 *   const chunk = r.takeAudio(3840); // 160 ms at 24 kHz
 */
export class CascadeReply implements SpokenUtterance {
  readonly controller = new AbortController();
  /** The user message this reply answers, once it entered the context. */
  userEntry: { role: 'user'; content: string } | null = null;
  /** The assistant message in the context that holds what the user heard of this reply. */
  assistantEntry: { role: 'assistant'; content: string } | null = null;
  streamDone = false;
  /** Transcription found no words, or the model said nothing: there is no utterance. */
  nothingToSay = false;
  failure: VenusError | null = null;
  started = false;
  finished: 'completed' | 'interrupted' | null = null;
  chunkSeq = 0;
  private raw = '';
  private textAt = 0;
  private readonly parser = new DelegateParser();
  private readonly splitter = new SentenceSplitter();
  private span: { query: string; at: number } | null = null;
  private readonly sentences: Segment[] = [];
  private playSegment = 0;
  private playOffset = 0;
  private playedSamples = 0;

  constructor(
    readonly id: string,
    readonly turn: Turn,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(): void {
    this.controller.abort();
  }

  /** Takes a raw delta from the model; returns the sentences it completed, to synthesise. */
  pushText(delta: string): string[] {
    this.raw += delta;
    let visible = '';
    for (const event of this.parser.push(delta)) {
      if (event.kind === 'text') visible += event.text;
      // The first complete span is the one the host acts on; it stays in the context.
      else if (event.kind === 'close' && !this.span) this.span = { query: event.query, at: this.raw.length };
    }
    return this.splitter.push(stripReservedTags(visible));
  }

  /** The model finished; returns the last sentence, if any. */
  endText(): string[] {
    this.parser.endTurn();
    this.streamDone = true;
    if (this.raw.trim() === '') this.nothingToSay = true;
    return this.splitter.flush();
  }

  addSegment(text: string): Segment {
    const segment: Segment = { text, audio: null };
    this.sentences.push(segment);
    return segment;
  }

  /** Whether a step has anything of this reply to emit yet. */
  get hasOutput(): boolean {
    return this.textAt < this.raw.length || this.sentences[0]?.audio != null;
  }

  /** Every raw character not yet emitted: text is passed through as fast as it streams. */
  nextTextDelta(): string {
    const delta = this.raw.slice(this.textAt);
    this.textAt = this.raw.length;
    return delta;
  }

  restText(): string {
    return this.nextTextDelta();
  }

  /** Up to `maxSamples` of speech, crossing sentence boundaries, or null when none is ready. */
  takeAudio(maxSamples: number): Int16Array | null {
    const parts: Int16Array[] = [];
    let taken = 0;
    while (taken < maxSamples) {
      const audio = this.sentences[this.playSegment]?.audio;
      if (!audio) break;
      const end = Math.min(audio.length, this.playOffset + (maxSamples - taken));
      if (end > this.playOffset) parts.push(audio.subarray(this.playOffset, end));
      taken += end - this.playOffset;
      this.playOffset = end;
      if (this.playOffset >= audio.length) {
        this.playSegment += 1;
        this.playOffset = 0;
      }
    }
    if (taken === 0) return null;
    this.playedSamples += taken;
    const out = new Int16Array(taken);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  /** All text and all speech has been emitted. */
  get done(): boolean {
    return this.streamDone && this.textAt >= this.raw.length && this.playSegment >= this.sentences.length;
  }

  get emittedMs(): number {
    return this.playedSamples / 24;
  }

  /** Sentences whose speech is synthesised, up to the first that is not yet (speech is heard in order). */
  get segments(): readonly SpokenSegment[] {
    const known: SpokenSegment[] = [];
    for (const segment of this.sentences) {
      if (!segment.audio) break;
      known.push({ text: segment.text, durationMs: segment.audio.length / 24 });
    }
    return known;
  }

  get fullText(): string {
    return this.segments.map((s) => s.text).join(' ');
  }

  /** What the context keeps of this reply: the heard text, and the delegate span if the host received it. */
  contextText(heard: string): string {
    const span = this.span && this.span.at <= this.textAt ? `<delegate>${this.span.query}</delegate>` : '';
    return [heard, span].filter(Boolean).join(' ');
  }
}
