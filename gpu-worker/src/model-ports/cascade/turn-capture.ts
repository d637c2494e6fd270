import { concatPcm } from '@venus/protocol';

/** Audio kept from before the onset: the VAD confirms speech a few frames after it began. */
const PREROLL_SAMPLES = 16 * 480;
/** Longest turn sent for transcription (60 s); the rest of a longer burst is dropped. */
const MAX_TURN_SAMPLES = 16_000 * 60;

/**
 * The user's audio for one turn, at step granularity: while no speech is heard it keeps a short
 * pre-roll; from the step in which speech is heard until the burst ends it records everything, so
 * the transcriber gets the whole utterance with a little silence on either side.
 *
 * @example
 *   capture.add(stepAudio, hadSpeech);
 *   if (burstEnded) transcribe(capture.finish());
 */
export class TurnCapture {
  private preroll: Int16Array[] = [];
  private prerollSamples = 0;
  private parts: Int16Array[] | null = null;
  private samples = 0;
  private discarding = false;

  get active(): boolean {
    return this.parts !== null;
  }

  /** Adds one step's audio; `speech` says the step had speech in it. */
  add(audio: Int16Array, speech: boolean): void {
    if (audio.length === 0) return;
    if (!this.parts) {
      if (!speech) {
        this.keepPreroll(audio);
        return;
      }
      this.parts = this.preroll;
      this.samples = this.prerollSamples;
      this.preroll = [];
      this.prerollSamples = 0;
    }
    if (this.discarding || this.samples >= MAX_TURN_SAMPLES) return;
    const room = MAX_TURN_SAMPLES - this.samples;
    this.parts.push(audio.length > room ? audio.subarray(0, room) : audio);
    this.samples += Math.min(room, audio.length);
  }

  /** Typed words took the floor: the speech being recorded is not a turn of its own. */
  discardUntilEnd(): void {
    if (!this.parts) return;
    this.discarding = true;
    this.parts = [];
    this.samples = 0;
  }

  /** Ends the capture at the end of a burst; null when it was discarded or empty. */
  finish(): Int16Array | null {
    const parts = this.parts;
    const discarded = this.discarding;
    this.parts = null;
    this.samples = 0;
    this.discarding = false;
    if (!parts || discarded) return null;
    return concatPcm(parts);
  }

  reset(): void {
    this.parts = null;
    this.samples = 0;
    this.discarding = false;
    this.preroll = [];
    this.prerollSamples = 0;
  }

  private keepPreroll(audio: Int16Array): void {
    this.preroll.push(audio);
    this.prerollSamples += audio.length;
    while (this.preroll.length > 1 && this.prerollSamples - this.preroll[0]!.length >= PREROLL_SAMPLES) {
      this.prerollSamples -= this.preroll.shift()!.length;
    }
    const first = this.preroll[0]!;
    if (this.prerollSamples > PREROLL_SAMPLES && first.length > this.prerollSamples - PREROLL_SAMPLES) {
      const trim = this.prerollSamples - PREROLL_SAMPLES;
      this.preroll[0] = first.subarray(trim);
      this.prerollSamples -= trim;
    }
  }
}
