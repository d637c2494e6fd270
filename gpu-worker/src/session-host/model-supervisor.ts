import { type ModelSession, toVenusError, type VenusError } from '@venus/protocol';

export const REOPEN_ATTEMPTS = 5;
export const REOPEN_BACKOFF_MS = 100;

export interface ModelSupervisorOptions {
  model: ModelSession;
  incarnation: number;
  /** Opens a fresh model session at `incarnation`; without it, a lost model is only reported. */
  reopen?: (incarnation: number) => Promise<ModelSession>;
  /** A failure that is not handled by reopening. */
  onError: (code: VenusError['code'], message: string) => void;
  /** The model was reopened under a new incarnation. */
  onReopened: (incarnation: number) => void;
  isClosed: () => boolean;
  /** Waits between reopen attempts (injectable so tests need no real time). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Holds the session's current model session and its incarnation. When the model loses the session
 * (a retryable `model_unavailable`, e.g. a crashed inference thread) it reopens it with the next
 * incarnation, backing off exponentially for up to `REOPEN_ATTEMPTS` tries; failures of a session
 * already replaced are ignored (they belong to the old incarnation).
 */
export class ModelSupervisor {
  private current: ModelSession;
  private incarnationNo: number;
  private reopening: Promise<void> | null = null;

  constructor(private readonly opts: ModelSupervisorOptions) {
    this.current = opts.model;
    this.incarnationNo = opts.incarnation;
  }

  get model(): ModelSession {
    return this.current;
  }

  get incarnation(): number {
    return this.incarnationNo;
  }

  /** A reopen is under way: the foreground has no model to step. */
  get isReopening(): boolean {
    return this.reopening !== null;
  }

  /** Runs a model call in the background; a failure is reported or handled by reopening. */
  guard(p: Promise<unknown>, what = 'model input failed'): void {
    const model = this.current;
    p.catch((err: unknown) => this.failed(err, model, what));
  }

  /** Reports a failure of `model`'s call unless it is handled by reopening. */
  failed(err: unknown, model: ModelSession, what: string): void {
    if (this.opts.isClosed()) return;
    const e = toVenusError(err, 'model_step_failed');
    if (!this.lost(e, model)) this.opts.onError(e.code, `${what}: ${String(err)}`);
  }

  private lost(e: VenusError, model: ModelSession): boolean {
    if (model !== this.current) return true;
    const { reopen } = this.opts;
    if (e.code !== 'model_unavailable' || !e.retryable || !reopen) return false;
    this.reopening ??= this.reopenLoop(reopen).finally(() => {
      this.reopening = null;
    });
    return true;
  }

  private async reopenLoop(open: (incarnation: number) => Promise<ModelSession>): Promise<void> {
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const lost = this.current;
    for (let attempt = 1; !this.opts.isClosed(); attempt++) {
      const incarnation = this.incarnationNo + 1;
      try {
        const model = await open(incarnation);
        if (this.opts.isClosed()) {
          await closeQuietly(model, 'session_closed');
          return;
        }
        this.current = model;
        this.incarnationNo = incarnation;
        this.opts.onReopened(incarnation);
        void closeQuietly(lost, 'model_restarted');
        return;
      } catch (err) {
        if (attempt >= REOPEN_ATTEMPTS) {
          const e = toVenusError(err, 'model_unavailable');
          this.opts.onError(e.code, `could not reopen the model session: ${e.message}`);
          return;
        }
        await sleep(REOPEN_BACKOFF_MS * 2 ** attempt);
      }
    }
  }

  async close(reason: string): Promise<void> {
    await closeQuietly(this.current, reason);
  }
}

/**
 * Closing a model session that is already gone (its thread died, it was replaced) fails by design;
 * there is nothing left to release, so the failure is not a defect.
 */
async function closeQuietly(model: ModelSession, reason: string): Promise<void> {
  await model.close(reason).catch(() => undefined);
}
