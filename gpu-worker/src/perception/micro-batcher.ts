/**
 * Gathers the requests of many sessions into batches: requests made in the same turn of the event
 * loop (the steps of many sessions arriving together) run as one batch; while a batch runs, new
 * requests wait and form the next one, so batches never overlap and no request waits longer than
 * one batch. `run` answers each request in order, fulfilled or rejected on its own; a `run` that
 * throws rejects every request of its batch.
 *
 * @example
 *   const batcher = new MicroBatcher(async (frames: Float32Array[]) => frames.map((f) => ({ status: 'fulfilled', value: f.length })));
 *   const n = await batcher.submit(new Float32Array(512));
 */
export class MicroBatcher<Req, Res> {
  private waiting: Array<{ request: Req; resolve: (value: Res) => void; reject: (err: unknown) => void }> = [];
  private scheduled = false;
  private running = false;

  constructor(private readonly run: (requests: Req[]) => Promise<Array<PromiseSettledResult<Res>>>) {}

  submit(request: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.scheduled || this.running || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.running = true;
      const batch = this.waiting;
      this.waiting = [];
      this.run(batch.map((b) => b.request))
        .then(
          (results) => {
            batch.forEach((b, i) => {
              const result = results[i];
              if (result?.status === 'fulfilled') b.resolve(result.value);
              else b.reject(result ? result.reason : new Error('the batch gave no result for this request'));
            });
          },
          (err: unknown) => {
            for (const b of batch) b.reject(err);
          },
        )
        .finally(() => {
          this.running = false;
          this.kick();
        });
    });
  }
}
