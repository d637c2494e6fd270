import type { OutputStep, SpokenSegment } from '@venus/protocol';
import type { SpokenUtterance } from '../duplex-dialogue/speech-pacing.ts';
import type { RequestIntent } from './intents.ts';
import { visibleText } from './replies.ts';

export type UtteranceRole = 'answer' | 'repair' | 'backend' | 'offer' | 'resume' | 'other';

export interface UtteranceSpec {
  /** Raw text, a hidden delegate span included. */
  text: string;
  role: UtteranceRole;
  /** The request this utterance answers, so a correction can regenerate it with a new slot. */
  intent?: RequestIntent;
  continues?: OutputStep['continues'];
  resumeOffer?: OutputStep['resumeOffer'];
  speaksPrefill?: OutputStep['speaksPrefill'];
}

/** Text deltas are cut at arbitrary points, this many characters long, so tags cross step boundaries. */
const MIN_DELTA_CHARS = 12;
const MAX_DELTA_CHARS = 25;

/**
 * One thing the assistant says: its raw text (emitted as deltas over the first steps), the visible
 * part that is synthesised (delegate span removed), and its speech, paced out one chunk per step.
 * Audio arrives asynchronously from the synthesiser; until then the utterance emits text only.
 *
 * @example
 *   const u = new Utterance('utt_1', { text: replyTo(intent), role: 'answer', intent }, Math.random);
 *   u.setAudio(pcm24k);
 *   const chunk = u.takeAudio(3840); // 160 ms at 24 kHz
 */
export class Utterance implements SpokenUtterance {
  readonly visible: string;
  audio: Int16Array | null = null;
  /** Synthesis failed: the utterance finishes with text only. */
  audioFailed = false;
  /** Settles when synthesis has (set `audio` or `audioFailed`); null before it was asked for. */
  synthesis: Promise<void> | null = null;
  started = false;
  finished: 'completed' | 'interrupted' | null = null;
  chunkSeq = 0;
  private textAt = 0;
  private playhead = 0;

  /** `draw` returns a uniform number in [0, 1): where the next text delta ends. */
  constructor(
    readonly id: string,
    readonly spec: UtteranceSpec,
    private readonly draw: () => number,
  ) {
    this.visible = visibleText(spec.text);
  }

  setAudio(pcm: Int16Array): void {
    this.audio = pcm;
  }

  nextTextDelta(): string {
    if (this.textAt >= this.spec.text.length) return '';
    const size = MIN_DELTA_CHARS + Math.floor(this.draw() * (MAX_DELTA_CHARS - MIN_DELTA_CHARS + 1));
    const delta = this.spec.text.slice(this.textAt, this.textAt + size);
    this.textAt += delta.length;
    return delta;
  }

  restText(): string {
    const rest = this.spec.text.slice(this.textAt);
    this.textAt = this.spec.text.length;
    return rest;
  }

  /** Up to `maxSamples` of speech from the playhead, or null when none is ready or due. */
  takeAudio(maxSamples: number): Int16Array | null {
    if (!this.audio || maxSamples <= 0 || this.playhead >= this.audio.length) return null;
    const end = Math.min(this.audio.length, this.playhead + maxSamples);
    const chunk = this.audio.slice(this.playhead, end);
    this.playhead = end;
    return chunk;
  }

  /** All speech has been emitted, or there is none to emit. */
  get done(): boolean {
    if (this.audioFailed) return this.textAt >= this.spec.text.length;
    return this.audio !== null && this.playhead >= this.audio.length;
  }

  get emittedMs(): number {
    return this.playhead / 24;
  }

  get fullText(): string {
    return this.visible;
  }

  /** The whole visible reply is one segment, known once synthesised. */
  get segments(): readonly SpokenSegment[] {
    return this.audio ? [{ text: this.visible, durationMs: this.audio.length / 24 }] : [];
  }
}
