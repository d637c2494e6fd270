import type { DelegationExecutor } from '../delegation-executor.ts';
import type { WorkerToEdgeFrame } from '../relay-frames.ts';
import { isTerminal } from '../work-state.ts';
import { type Context, context, ROOT_CONTEXT, type Span, SpanStatusCode, trace, venusTracer } from './tracing.ts';

/** Delegations traced at once on one worker; past it the oldest trace is ended unfinished. */
const MAX_OPEN = 10_000;

interface OpenTrace {
  root: Span;
  ctx: Context;
}

/**
 * The session host's side of a delegation's trace, one trace per delegation:
 * - `session_host.delegation` (the root), from the submit to the work's terminal state;
 * - `queue.enqueue`, around the executor's submit: active while it runs, so the BullMQ producer
 *   writes its `traceparent` into the job and the harness's `harness.run` / `function.run` join it;
 * - `session_host.admission`, when the result enters the model's input (`work.admitted`).
 * It wraps the executor (a decorator over the protocol interface, so the host is untouched) and
 * reads the host's frames: `host.onFrame(tracing.observe)`. No-ops while tracing is off.
 *
 * @example
 *   const tracing = new DelegationTracing();
 *   const host = new SessionHost({ model, store, executor: tracing.wrap(executor) });
 *   host.onFrame(tracing.observe);
 */
export class DelegationTracing {
  readonly #open = new Map<string, OpenTrace>();

  wrap(executor: DelegationExecutor): DelegationExecutor {
    return {
      submit: async (request) => {
        const tracer = venusTracer();
        const attributes = {
          'venus.work_id': request.workId,
          'venus.session': request.session,
          'venus.tenant': request.tenant,
          'venus.incarnation': request.incarnation,
        };
        const root = tracer.startSpan('session_host.delegation', { attributes }, ROOT_CONTEXT);
        if (!root.isRecording()) return executor.submit(request);
        const ctx = trace.setSpan(ROOT_CONTEXT, root);
        this.#remember(request.workId, { root, ctx });
        const enqueue = tracer.startSpan('queue.enqueue', { attributes }, ctx);
        try {
          await context.with(trace.setSpan(ctx, enqueue), () => executor.submit(request));
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          enqueue.setStatus({ code: SpanStatusCode.ERROR, message });
          this.#finish(request.workId, 'refused', message);
          throw error;
        } finally {
          enqueue.end();
        }
      },
      cancel: (workId, reason) => executor.cancel(workId, reason),
      subscribe: (listener) => executor.subscribe(listener),
      ...(executor.adopt ? { adopt: (work) => executor.adopt?.(work) ?? Promise.resolve() } : {}),
      close: async () => {
        for (const workId of [...this.#open.keys()]) this.#finish(workId, 'closed');
        await executor.close();
      },
    };
  }

  readonly observe = (frame: WorkerToEdgeFrame): void => {
    if (frame.kind !== 'timeline') return;
    const { event } = frame;
    if (event.type === 'work.admitted') {
      const open = this.#open.get(event.data.workId);
      if (open === undefined) return;
      venusTracer()
        .startSpan('session_host.admission', { attributes: { 'venus.admission_mode': event.data.mode } }, open.ctx)
        .end();
      return;
    }
    if (event.type === 'work.state' && isTerminal(event.data.state)) this.#finish(event.data.workId, event.data.state);
  };

  /** Delegations whose trace is still open. */
  get size(): number {
    return this.#open.size;
  }

  #remember(workId: string, open: OpenTrace): void {
    if (this.#open.size >= MAX_OPEN) {
      const oldest = this.#open.keys().next().value;
      if (oldest !== undefined) this.#finish(oldest, 'untracked');
    }
    this.#open.set(workId, open);
  }

  #finish(workId: string, state: string, message?: string): void {
    const open = this.#open.get(workId);
    if (open === undefined) return;
    this.#open.delete(workId);
    open.root.setAttribute('venus.work_state', state);
    if (message !== undefined) open.root.setStatus({ code: SpanStatusCode.ERROR, message });
    open.root.end();
  }
}
