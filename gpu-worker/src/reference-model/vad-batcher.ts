import type { SileroVad, VadStream } from './silero-vad.ts';

interface Request {
  stream: VadStream;
  frames: Float32Array[];
  resolve: (probabilities: Float32Array) => void;
  reject: (err: unknown) => void;
}

/**
 * Batches VAD across sessions: requests made in the same turn of the event loop (the steps of
 * many sessions arriving together) run as one batch per frame index, so a 160 ms step of 64
 * sessions costs five batched runs instead of 320 single ones. A flush waits for the previous one,
 * and requests that arrive meanwhile join the next batch.
 *
 * @example
 *   const batcher = new VadBatcher(vad);
 *   const probabilities = await batcher.score(session.voice.stream, frames);
 */
export class VadBatcher {
  private waiting: Request[] = [];
  private scheduled = false;
  private running = false;

  constructor(private readonly vad: SileroVad) {}

  score(stream: VadStream, frames: Float32Array[]): Promise<Float32Array> {
    if (frames.length === 0) return Promise.resolve(new Float32Array(0));
    return new Promise((resolve, reject) => {
      this.waiting.push({ stream, frames, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.scheduled || this.running || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.running = true;
      void this.flush().finally(() => {
        this.running = false;
        this.kick();
      });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    const results = batch.map((r) => new Float32Array(r.frames.length));
    const rounds = Math.max(...batch.map((r) => r.frames.length));
    try {
      for (let round = 0; round < rounds; round++) {
        const members = batch.map((_, i) => i).filter((i) => batch[i]!.frames.length > round);
        const probabilities = await this.vad.run(
          members.map((i) => batch[i]!.stream),
          members.map((i) => batch[i]!.frames[round]!),
        );
        members.forEach((i, k) => {
          results[i]![round] = probabilities[k] ?? 0;
        });
      }
      batch.forEach((r, i) => {
        r.resolve(results[i]!);
      });
    } catch (err) {
      for (const r of batch) r.reject(err);
    }
  }
}
