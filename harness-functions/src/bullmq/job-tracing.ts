import type { DelegationRequest } from '@venus/protocol';
import { contextFromTraceparent, type Span, SpanStatusCode, trace, venusTracer } from '@venus/protocol/node';

export interface JobTrace {
  /** The planner chose the function: its span starts (a retry's plan replaces the last one). */
  planned(functionName: string): void;
  /** How the run ended. */
  outcome(ok: boolean, reason?: string): void;
  end(): void;
}

/**
 * The harness's part of a delegation's trace: `harness.run` (child of the job's `traceparent`, the
 * session host's enqueue span) and, inside it, `function.run` for the chosen function. No-ops
 * while tracing is off.
 */
export function traceJob(traceparent: string | undefined, request: DelegationRequest): JobTrace {
  const tracer = venusTracer();
  const parent = contextFromTraceparent(traceparent);
  const attributes = {
    'venus.work_id': request.workId,
    'venus.session': request.session,
    'venus.tenant': request.tenant,
  };
  const run = tracer.startSpan('harness.run', { attributes }, parent);
  const inRun = trace.setSpan(parent, run);
  let fn: Span | undefined;
  return {
    planned(functionName) {
      fn?.end();
      fn = tracer.startSpan('function.run', { attributes: { ...attributes, 'venus.function': functionName } }, inRun);
    },
    outcome(ok, reason) {
      const status = ok ? { code: SpanStatusCode.OK } : { code: SpanStatusCode.ERROR, message: reason ?? 'failed' };
      fn?.setStatus(status);
      run.setStatus(status);
    },
    end() {
      fn?.end();
      run.end();
    },
  };
}
