import type { RecogniserFinal, RecogniserStream } from '@venus/protocol';
import type { PartialWords } from './overlap-features.ts';

/** A step's user audio with the input it came from. */
export interface SeqAudio {
  readonly seq: number;
  readonly pcm: Int16Array;
}

/** A recognised utterance with the inputs that carried it. */
export interface RecognisedUtterance {
  readonly final: RecogniserFinal;
  readonly fromInputSeq: number;
  readonly toInputSeq: number;
}

export interface UtteranceRecognitionOptions {
  /** Opens the session's recogniser stream; called once, at the first speech. */
  open: () => Promise<RecogniserStream>;
  /** Called once if the stream cannot be opened (the session goes on without words). */
  onUnavailable?: (err: unknown) => void;
}

/** Audio kept from before an onset (the VAD confirms speech a few frames late). */
const PRE_ROLL_SAMPLES = 16 * 300;
/** An utterance is ended here even if the VAD still hears speech: bounds the decoder's work per utterance. */
const MAX_UTTERANCE_SAMPLES = 16 * 15_000;
/** Audio held while the stream opens; past it the oldest is dropped (the stream opens in well under a second). */
const MAX_OPENING_SAMPLES = 16 * 5_000;
/** Finals not yet taken by a step; a step takes them all, so more than a few means no steps are running. */
const MAX_WAITING_FINALS = 16;

/**
 * Streaming recognition of one session's speech: the stretches of audio the VAD marks as speech
 * (onset to end, with a short pre-roll) go to the recogniser as they arrive; the latest partial
 * hypothesis of the utterance in progress is readable at any time (for the overlap policy), and
 * each utterance's final comes back, with the inputs that carried it, through `takeFinals`.
 * Decoding happens on the recogniser's own thread; this class only cuts and forwards audio.
 *
 * @example
 *   rec.feed(stepAudio, wasInSpeech || voice.milestones.length > 0, voice.inSpeech);
 *   for (const u of rec.takeFinals()) hear(u.final.text);
 */
export class UtteranceRecognition {
  private stream: RecogniserStream | null = null;
  private opening = false;
  private unavailable = false;
  private readonly held: Int16Array[] = [];
  private heldSamples = 0;
  private preRoll: Int16Array[] = [];
  private inUtterance = false;
  private utteranceSamples = 0;
  private firstSeq = 0;
  private lastSeq = 0;
  /** Input ranges of utterances sent to the recogniser whose final has not come back, oldest first. */
  private readonly ranges: Array<{ from: number; to: number }> = [];
  private readonly finals: RecognisedUtterance[] = [];
  private partialText = '';
  private partialScore = Number.NaN;
  private closed = false;

  constructor(private readonly options: UtteranceRecognitionOptions) {}

  /** The latest partial hypothesis of the utterance being spoken ('' between utterances). */
  get partial(): string {
    return this.inUtterance ? this.partialText : '';
  }

  /** The partial with its acoustic score per frame (NaN between utterances or before the first partial). */
  get words(): PartialWords {
    const text = this.partial;
    return { text, score: text !== '' ? this.partialScore : Number.NaN };
  }

  /** Whether the session has words at all (false once the stream could not be opened). */
  get available(): boolean {
    return !this.unavailable;
  }

  /**
   * One step's audio. `speechInStep`: the VAD heard speech somewhere in this audio (a burst was
   * active, began or ended); `inSpeech`: a burst is still active at its end.
   */
  feed(audio: readonly SeqAudio[], speechInStep: boolean, inSpeech: boolean): void {
    if (this.closed || this.unavailable) return;
    if (!this.inUtterance && speechInStep) {
      this.inUtterance = true;
      this.utteranceSamples = 0;
      this.partialText = '';
      this.partialScore = Number.NaN;
      this.firstSeq = audio[0]?.seq ?? this.lastSeq;
      for (const pcm of this.preRoll) this.send(pcm);
      this.preRoll = [];
    }
    for (const a of audio) {
      if (this.inUtterance) {
        this.send(a.pcm);
        this.lastSeq = a.seq;
      } else this.keepPreRoll(a.pcm);
    }
    if (this.inUtterance && (!inSpeech || this.utteranceSamples >= MAX_UTTERANCE_SAMPLES)) this.endUtterance();
  }

  /** Finals that came back since the last call, in order. */
  takeFinals(): RecognisedUtterance[] {
    return this.finals.splice(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.held.length = 0;
    await this.stream?.close();
  }

  private endUtterance(): void {
    this.inUtterance = false;
    this.ranges.push({ from: this.firstSeq, to: this.lastSeq });
    if (this.stream) this.stream.endUtterance();
    else this.held.push(new Int16Array(0));
  }

  private keepPreRoll(pcm: Int16Array): void {
    this.preRoll.push(pcm);
    let total = this.preRoll.reduce((n, p) => n + p.length, 0);
    while (total - this.preRoll[0]!.length >= PRE_ROLL_SAMPLES) total -= this.preRoll.shift()!.length;
    if (total > PRE_ROLL_SAMPLES) this.preRoll[0] = this.preRoll[0]!.subarray(total - PRE_ROLL_SAMPLES);
  }

  /** Audio goes to the stream; until it is open it waits (an empty array marks an utterance end). */
  private send(pcm: Int16Array): void {
    this.utteranceSamples += pcm.length;
    if (this.stream) {
      this.push(pcm);
      return;
    }
    this.held.push(pcm);
    this.heldSamples += pcm.length;
    while (this.heldSamples > MAX_OPENING_SAMPLES && this.held.length > 1)
      this.heldSamples -= this.held.shift()!.length;
    if (!this.opening) this.startOpening();
  }

  private push(pcm: Int16Array): void {
    try {
      this.stream!.push(pcm);
    } catch {
      // rate_limited: the decoder is seconds behind. This piece is lost to recognition (not to the
      // timeline, which has the audio); the utterance's final still comes.
    }
  }

  private startOpening(): void {
    this.opening = true;
    this.options.open().then(
      (stream) => {
        if (this.closed) {
          void stream.close();
          return;
        }
        this.stream = stream;
        void this.listen(stream);
        for (const pcm of this.held.splice(0)) {
          if (pcm.length === 0) stream.endUtterance();
          else this.push(pcm);
        }
        this.heldSamples = 0;
      },
      (err: unknown) => {
        this.unavailable = true;
        this.held.length = 0;
        this.inUtterance = false;
        this.options.onUnavailable?.(err);
      },
    );
  }

  private async listen(stream: RecogniserStream): Promise<void> {
    for await (const event of stream.events) {
      if (event.type === 'partial') {
        this.partialText = event.text;
        this.partialScore = event.score;
        continue;
      }
      const range = this.ranges.shift() ?? { from: this.firstSeq, to: this.lastSeq };
      this.finals.push({ final: event, fromInputSeq: range.from, toInputSeq: range.to });
      if (this.finals.length > MAX_WAITING_FINALS) this.finals.shift();
    }
  }
}
