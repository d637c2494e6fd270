import { OVERLAP_RULES } from './overlap-policy.ts';
import { VAD_FRAME_MS, VAD_FRAME_SAMPLES, VadStream } from './silero-vad.ts';

/** Speech onset: this many consecutive frames at or above the threshold. */
const ONSET_FRAMES = 2;
const SPEECH_THRESHOLD = 0.5;
/** Below this a frame counts towards silence; in between it neither extends speech nor resets silence. */
const SILENCE_THRESHOLD = 0.35;
const END_SILENCE_MS = 500;
const END_SILENCE_FRAMES = Math.ceil(END_SILENCE_MS / VAD_FRAME_MS);
/** Bursts shorter than this say little about how loud the user normally speaks. */
const MIN_LEVEL_SAMPLE_MS = 300;

/** One stretch of user speech, from onset to end of speech. */
export interface Burst {
  /** Frames at or above the speech threshold, in ms. */
  speechMs: number;
  /** Mean power of the speech frames, dBFS. */
  levelDb: number;
  /** The assistant was speaking during some step of this burst. */
  overlapped: boolean;
  /** The overlap verdict for this burst has been given. */
  judged: boolean;
}

/** A point at which an overlapping burst can be judged. */
export interface BurstMilestone {
  at: 'sustained' | 'ended';
  burst: Burst;
}

/** Sees each VAD frame with its speech probability and the burst it belongs to. */
export type FrameObserver = (frame: Float32Array, probability: number, burst: Burst | null, ended: boolean) => void;

export interface VoiceUpdate {
  /** The last onset or end of speech in this batch of frames. */
  event: { state: 'started' | 'stopped'; probability: number } | null;
  milestones: BurstMilestone[];
}

/**
 * One session's voice activity on top of Silero VAD: cuts incoming 16 kHz audio into 32 ms frames,
 * turns per-frame speech probabilities into onsets (p >= 0.5 on two consecutive frames) and ends
 * (>= 500 ms of silence after speech), and keeps per-burst statistics (speech time, level) and the
 * session's typical foreground speech level for the overlap rules in `audio-overlap.ts`.
 *
 * @example
 *   va.push(pcm16k);
 *   const frames = va.takeFrames();
 *   const update = va.update(await vad.run(frames.map(() => va.stream), frames), frames, true);
 */
export class VoiceActivity {
  readonly stream = new VadStream();
  /** Typical level of this user's foreground speech (dBFS), learned from bursts while the assistant was silent. */
  foregroundDb: number | null = null;
  private pending = new Float32Array(VAD_FRAME_SAMPLES * 4);
  private pendingLength = 0;
  private highRun = 0;
  /** Frames since silence began within a burst; 0 while speech continues. */
  private silenceFrames = 0;
  private onsetPower = 0;
  private burst: (Burst & { power: number; frames: number; sustainedSeen: boolean }) | null = null;

  /**
   * The user's typed (transcribed) words already took the floor: the speech burst carrying them is
   * not judged again, so the assistant's answer is not cut off by the tail of the same sentence.
   */
  claimFloor(): void {
    if (this.burst) this.burst.judged = true;
  }

  /** Appends 16 kHz PCM16 audio. */
  push(pcm: Int16Array): void {
    const needed = this.pendingLength + pcm.length;
    if (needed > this.pending.length) {
      const grown = new Float32Array(Math.max(needed, this.pending.length * 2));
      grown.set(this.pending.subarray(0, this.pendingLength));
      this.pending = grown;
    }
    for (let i = 0; i < pcm.length; i++) this.pending[this.pendingLength + i] = pcm[i]! / 32768;
    this.pendingLength = needed;
  }

  /** Whole frames buffered so far, oldest first; the remainder waits for more audio. */
  takeFrames(): Float32Array[] {
    const count = Math.floor(this.pendingLength / VAD_FRAME_SAMPLES);
    const frames: Float32Array[] = [];
    for (let i = 0; i < count; i++) frames.push(this.pending.slice(i * VAD_FRAME_SAMPLES, (i + 1) * VAD_FRAME_SAMPLES));
    const used = count * VAD_FRAME_SAMPLES;
    this.pending.copyWithin(0, used, this.pendingLength);
    this.pendingLength -= used;
    return frames;
  }

  get inSpeech(): boolean {
    return this.burst !== null;
  }

  /** The burst in progress, if any. */
  get activeBurst(): Readonly<Burst> | null {
    return this.burst;
  }

  /**
   * Feeds the frames' probabilities in order; `assistantSpeaking` marks an active burst as
   * overlapping. `onFrame` sees every frame with the burst it belongs to (null outside speech;
   * `ended` on the frame that ends it): the overlap features are computed from it.
   */
  update(
    probabilities: Float32Array,
    frames: readonly Float32Array[],
    assistantSpeaking: boolean,
    onFrame?: FrameObserver,
  ): VoiceUpdate {
    const milestones: BurstMilestone[] = [];
    let event: VoiceUpdate['event'] = null;
    if (this.burst && assistantSpeaking) this.burst.overlapped = true;
    for (let i = 0; i < frames.length; i++) {
      const p = probabilities[i] ?? 0;
      const power = meanSquare(frames[i]!);
      const burst = this.burst;
      if (!burst) {
        this.highRun = p >= SPEECH_THRESHOLD ? this.highRun + 1 : 0;
        if (this.highRun === 1) this.onsetPower = power;
        if (this.highRun >= ONSET_FRAMES) {
          this.highRun = 0;
          this.silenceFrames = 0;
          const sum = this.onsetPower + power;
          this.burst = {
            speechMs: ONSET_FRAMES * VAD_FRAME_MS,
            power: sum,
            frames: ONSET_FRAMES,
            levelDb: toDb(sum / ONSET_FRAMES),
            overlapped: assistantSpeaking,
            judged: false,
            sustainedSeen: false,
          };
          event = { state: 'started', probability: p };
        }
        onFrame?.(frames[i]!, p, this.burst, false);
        continue;
      }
      if (p >= SPEECH_THRESHOLD) {
        burst.frames += 1;
        burst.power += power;
        burst.speechMs = burst.frames * VAD_FRAME_MS;
        burst.levelDb = toDb(burst.power / burst.frames);
        this.silenceFrames = 0;
        if (!burst.sustainedSeen && burst.speechMs >= OVERLAP_RULES.sustainedMs) {
          burst.sustainedSeen = true;
          milestones.push({ at: 'sustained', burst });
        }
      } else if (this.silenceFrames > 0 || p < SILENCE_THRESHOLD) {
        this.silenceFrames += 1;
        if (this.silenceFrames >= END_SILENCE_FRAMES) {
          milestones.push({ at: 'ended', burst });
          event = { state: 'stopped', probability: p };
          if (!burst.overlapped && burst.speechMs >= MIN_LEVEL_SAMPLE_MS) this.learnLevel(burst.levelDb);
          this.burst = null;
          this.silenceFrames = 0;
        }
      }
      onFrame?.(frames[i]!, p, burst, this.burst === null);
    }
    return { event, milestones };
  }

  /** Counts a burst the user addressed to the assistant (e.g. a barge-in) towards the foreground level. */
  learnLevel(levelDb: number): void {
    this.foregroundDb = this.foregroundDb === null ? levelDb : 0.8 * this.foregroundDb + 0.2 * levelDb;
  }

  reset(): void {
    this.stream.reset();
    this.pendingLength = 0;
    this.highRun = 0;
    this.silenceFrames = 0;
    this.burst = null;
  }
}

function meanSquare(frame: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!;
  return sum / frame.length;
}

function toDb(power: number): number {
  return 10 * Math.log10(Math.max(power, 1e-12));
}
