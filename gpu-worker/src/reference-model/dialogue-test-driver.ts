import type { ContextEntry, OutputStep } from '@venus/protocol';
import { DialogueSession, type DialogueSessionOptions, type Synthesize } from './dialogue-session.ts';

/**
 * Test support for the reference dialogue: drives one DialogueSession step by step with a fake
 * synthesiser and fake VAD scores (speech or silence), as the inference thread would.
 */

/** Fake synthesiser: 20 ms of constant "speech" per character, resolved on the next microtask. */
export const fakeSynthesize: Synthesize = async (text) => new Int16Array(text.length * 480).fill(1000);

export const CHUNK_MS = 160;
export const CHUNK_SAMPLES_24K = CHUNK_MS * 24;

export class Driver {
  readonly d: DialogueSession;
  private seq = 0;
  private chunk = 0;
  atMs = 0;

  constructor(options: Partial<DialogueSessionOptions> = {}) {
    this.d = new DialogueSession({ sessionId: 's1', incarnation: 0, synthesize: fakeSynthesize, ...options });
  }

  /** A restored conversation item, as the host hands it over (an input of its own). */
  restore(entry: ContextEntry): void {
    this.d.appendHistory(++this.seq, entry);
  }

  text(text: string): void {
    this.d.appendText(++this.seq, text);
  }

  /** One step; `speech` appends 160 ms of audio that the fake VAD scores as speech (or silence). */
  /** `listenOnly`: a perception tick between chunk boundaries (hears, emits nothing). */
  async step(
    options: { speech?: boolean; amplitude?: number; audible?: boolean; listenOnly?: boolean } = {},
  ): Promise<OutputStep> {
    await Promise.resolve();
    const amplitude = options.amplitude ?? 3000;
    const pcm = new Int16Array(CHUNK_MS * 16).map((_, i) =>
      options.speech ? Math.round(amplitude * Math.sin(i / 5)) : 0,
    );
    this.d.appendAudio(++this.seq, pcm);
    this.atMs += CHUNK_MS;
    const plan = this.d.beginStep({
      chunk: this.chunk++,
      inputSeqCutoff: this.seq,
      atMs: this.atMs,
      assistantAudible: options.audible ?? false,
      ...(options.listenOnly ? { listenOnly: true } : {}),
    });
    const probabilities = new Float32Array(plan.frames.length).fill(options.speech ? 0.95 : 0.01);
    return this.d.finishStep(plan, probabilities);
  }

  async until(
    predicate: (s: OutputStep) => boolean,
    options: Parameters<Driver['step']>[0] = {},
    max = 400,
  ): Promise<OutputStep[]> {
    const steps: OutputStep[] = [];
    for (let i = 0; i < max; i++) {
      const s = await this.step(options);
      steps.push(s);
      if (predicate(s)) return steps;
    }
    throw new Error(`condition not met in ${max} steps`);
  }
}
