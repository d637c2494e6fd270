import { mixInto, normalizeTo, pinkNoise, toPcm16 } from '../audio/signal.ts';
import { EVAL_RATE_HZ } from '../audio/wav-io.ts';
import type { Segment, SegmentRole, TranscriptEvent } from './scenario.ts';
import type { VoiceBank } from './voice-bank.ts';

export interface SayOptions {
  role: Exclude<SegmentRole, 'noise'>;
  text: string;
  voice: string;
  /** Start, in seconds from the start of the input. */
  at: number;
  levelDb: number;
  /** Part of the overlap event (left out of clean_input.wav). */
  overlap?: boolean;
  /** Whether the simulated client ASR transcribes it. */
  transcribe: boolean;
}

export interface BuiltScenario {
  input: Int16Array;
  clean: Int16Array;
  duration: number;
  segments: Segment[];
  transcripts: TranscriptEvent[];
}

const round = (s: number) => Math.round(s * 1000) / 1000;

/**
 * Places speech on a 16 kHz track and records, for each utterance, where it sits and when the
 * simulated client-side ASR sends its text: `asrDelayS` after the utterance ends, as a streaming
 * recogniser that finalises a segment after a short endpointing silence would. The reference model
 * takes its content from that text; the audio drives its voice activity and barge-in.
 *
 * @example
 *   const b = new ScenarioBuilder(bank, 0.5);
 *   const ctx = await b.say({ role: 'user', text: 'Hello there!', voice: 'en-us', at: 0.5, levelDb: -26, transcribe: true });
 *   const built = b.build(ctx.end + 7);
 */
export class ScenarioBuilder {
  private readonly placed: { segment: Segment; audio: Float32Array }[] = [];
  private readonly transcripts: TranscriptEvent[] = [];
  private noise: { levelDb: number; random: () => number } | null = null;

  constructor(
    private readonly bank: VoiceBank,
    readonly asrDelayS: number,
  ) {}

  async say(options: SayOptions): Promise<Segment> {
    const speech = normalizeTo(await this.bank.speech(options.text, options.voice), options.levelDb);
    const segment: Segment = {
      role: options.role,
      text: options.text,
      start: round(options.at),
      end: round(options.at + speech.length / EVAL_RATE_HZ),
      voice: options.voice,
      level_dbfs: round(options.levelDb),
      overlap: options.overlap ?? false,
    };
    this.placed.push({ segment, audio: speech });
    if (options.transcribe) this.transcripts.push({ at: round(segment.end + this.asrDelayS), text: options.text });
    return segment;
  }

  /** Pink noise under the whole input (a room, a fan, a television's hiss). */
  addNoise(levelDb: number, random: () => number): void {
    this.noise = { levelDb, random };
  }

  build(durationS: number): BuiltScenario {
    const length = Math.ceil(durationS * EVAL_RATE_HZ);
    const input = new Float32Array(length);
    const clean = new Float32Array(length);
    for (const { segment, audio } of this.placed) {
      const at = Math.round(segment.start * EVAL_RATE_HZ);
      mixInto(input, audio, at);
      if (!segment.overlap) mixInto(clean, audio, at);
    }
    const segments = this.placed.map((p) => p.segment);
    if (this.noise) {
      const noise = pinkNoise(length, this.noise.levelDb, this.noise.random);
      mixInto(input, noise, 0);
      mixInto(clean, noise, 0);
      segments.push({
        role: 'noise',
        text: '',
        start: 0,
        end: round(durationS),
        level_dbfs: this.noise.levelDb,
        overlap: false,
      });
    }
    return {
      input: toPcm16(input),
      clean: toPcm16(clean),
      duration: round(durationS),
      segments: segments.sort((a, b) => a.start - b.start),
      transcripts: [...this.transcripts].sort((a, b) => a.at - b.at),
    };
  }
}
