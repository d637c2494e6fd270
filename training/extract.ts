import { toPcm16 } from '../eval/audio/signal.ts';
import {
  type FeatureRow,
  fillEmbeddings,
  OverlapFeatureTracker,
  type PartialWords,
} from '../gpu-worker/src/perception/overlap-features.ts';
import { type Interruption, judgeOverlap, stopsEarly } from '../gpu-worker/src/perception/overlap-policy.ts';
import { DEMO_GRAMMAR } from '../gpu-worker/src/perception/pocketsphinx/demo-vocabulary.ts';
import { compileGrammar } from '../gpu-worker/src/perception/pocketsphinx/grammar-from-vocabulary.ts';
import { MODEL_DIR, PocketSphinxWasm } from '../gpu-worker/src/perception/pocketsphinx/pocketsphinx-wasm.ts';
import { Pronunciations } from '../gpu-worker/src/perception/pocketsphinx/pronunciations.ts';
import { DECODER_OPTIONS } from '../gpu-worker/src/perception/pocketsphinx/recogniser-protocol.ts';
import type { SileroVad } from '../gpu-worker/src/perception/silero-vad.ts';
import type { SpeechEmbedding } from '../gpu-worker/src/perception/speech-embedding.ts';
import { type Burst, VoiceActivity } from '../gpu-worker/src/perception/voice-activity.ts';
import type { Clip } from './clips.ts';

/** The decision step of the pipeline, ms: the head's decision points fall every 80 ms of burst. */
const STEP_MS = 80;
const STEP_SAMPLES = 16 * STEP_MS;
/** As in UtteranceRecognition: audio from before the onset goes to the recogniser too. */
const PRE_ROLL_SAMPLES = 16 * 300;

export interface ClipResult {
  /** The overlap's burst was heard at all (the VAD found speech in it while the assistant spoke). */
  heard: boolean;
  /** Burst start (the first of its onset frames) relative to the overlap's true start, ms. */
  onsetMs: number;
  rows: FeatureRow[];
  /** The v1 rules' verdict on the burst and the burst time at which they gave it. */
  rules: { verdict: Interruption; elapsedMs: number } | null;
}

/**
 * Runs a clip through the worker's own perception, step by step as a session would: Silero VAD and
 * VoiceActivity, the grammar recogniser (PocketSphinx wasm, the same grammar and decoder options,
 * run synchronously here so the partial at each step is reproducible), the feature tracker with
 * the speech embedding filled in after each step as the session thread does, and the v1 rules (level/duration milestones and early stop words) for the comparison.
 */
export class ClipExtractor {
  private constructor(
    private readonly vad: SileroVad,
    private readonly embedding: SpeechEmbedding,
    private readonly ps: PocketSphinxWasm,
    private readonly decoder: number,
  ) {}

  static async create(vad: SileroVad, embedding: SpeechEmbedding): Promise<ClipExtractor> {
    const ps = await PocketSphinxWasm.load();
    const pronunciations = Pronunciations.load(MODEL_DIR);
    const grammar = compileGrammar(DEMO_GRAMMAR, (w) => pronunciations.has(w));
    const decoder = ps.openGrammar(grammar.jsgf, DECODER_OPTIONS, pronunciations.dictionaryFor(grammar.words));
    return new ClipExtractor(vad, embedding, ps, decoder);
  }

  async run(clip: Clip): Promise<ClipResult> {
    const pcm = toPcm16(clip.audio);
    const voice = new VoiceActivity();
    const tracker = new OverlapFeatureTracker();
    const [overlapAt, overlapEnd] = clip.overlap.map((s) => s * 1000) as [number, number];
    const result: ClipResult = { heard: false, onsetMs: 0, rows: [], rules: null };
    let target: Burst | null = null;
    let onsetFrames = 0;
    let inUtterance = false;
    let partial: PartialWords = { text: '', score: Number.NaN };
    for (let at = 0; at < pcm.length; at += STEP_SAMPLES) {
      const tMs = at / 16;
      const step = pcm.subarray(at, at + STEP_SAMPLES);
      const speaking = tMs >= clip.assistant[0] * 1000;
      voice.push(step);
      const frames = voice.takeFrames();
      const probabilities = new Float32Array(frames.length);
      for (let i = 0; i < frames.length; i++)
        probabilities[i] = (await this.vad.run([voice.stream], [frames[i]!]))[0] ?? 0;
      const wasInSpeech = voice.inSpeech;
      const framesBefore = Math.floor(at / 512);
      let frameIndex = 0;
      const stepRows: FeatureRow[] = [];
      const update = voice.update(probabilities, frames, speaking, (frame, p, burst, ended) => {
        frameIndex += 1;
        if (
          burst &&
          !target &&
          burst.overlapped &&
          (framesBefore + frameIndex) * 32 >= overlapAt - 200 &&
          (framesBefore + frameIndex) * 32 < overlapEnd
        ) {
          target = burst;
          onsetFrames = framesBefore + frameIndex;
        }
        const row = tracker.frame(frame, p, burst, ended, partial, voice.foregroundDb);
        if (row && row.burst === target) stepRows.push(row);
      });
      await fillEmbeddings(stepRows, this.embedding);
      result.rows.push(...stepRows);
      // The v1 rules, as DuplexDialogue and DialogueSession apply them.
      if (target && !result.rules) {
        const t = target as Burst;
        for (const m of update.milestones) {
          if (m.burst !== t) continue;
          const verdict = judgeOverlap(m, voice.foregroundDb);
          if (verdict) result.rules = { verdict, elapsedMs: tMs + STEP_MS - (onsetFrames * 32 - 64) };
        }
      }
      // The recogniser hears speech stretches with a pre-roll, like UtteranceRecognition; only while
      // the assistant speaks (the overlaps), to halve the pipeline's decoding time. The decoder is
      // shared by all clips, so its running cepstral mean has adapted to speech as a session's has.
      const speechInStep = wasInSpeech || voice.inSpeech || update.milestones.some((m) => m.at === 'ended');
      if (!inUtterance && speechInStep && speaking) {
        inUtterance = true;
        this.ps.start(this.decoder);
        this.ps.process(this.decoder, pcm.subarray(Math.max(0, at - PRE_ROLL_SAMPLES), at));
      }
      if (inUtterance) {
        this.ps.process(this.decoder, step);
        const hyp = this.ps.hypothesis(this.decoder);
        partial = { text: hyp.text, score: hyp.frames > 0 ? hyp.score / hyp.frames : Number.NaN };
        const burst = voice.activeBurst;
        if (target && !result.rules && burst === target && stopsEarly(burst, hyp.text, voice.foregroundDb))
          result.rules = {
            verdict: { action: 'discard', cause: 'interruption', cancelsWork: false },
            elapsedMs: tMs + STEP_MS - (onsetFrames * 32 - 64),
          };
        if (!voice.inSpeech) {
          this.ps.end(this.decoder);
          inUtterance = false;
          partial = { text: '', score: Number.NaN };
        }
      }
    }
    if (inUtterance) this.ps.end(this.decoder);
    if (target) {
      result.heard = true;
      result.onsetMs = onsetFrames * 32 - 64 - overlapAt;
    }
    return result;
  }
}
