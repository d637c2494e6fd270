// Node-only helpers: kept off the main entry so the Workers build never loads node: modules.

export { DelegationTracing } from './delegation-tracing.ts';
export { type QueueCounts, VenusMetrics, type VenusMetricsOptions } from './metrics.ts';
export { type MetricsServer, serveMetrics } from './metrics-server.ts';
export { installProcessErrorHooks, settingsOrExit } from './process-errors.ts';
export { TimelineMetrics } from './timeline-metrics.ts';
export {
  type Context,
  context,
  contextFromTraceparent,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type StartTracingOptions,
  startTracing,
  TRACER_NAME,
  TRACING_EXPORTERS,
  TraceparentSchema,
  type Tracing,
  type TracingExporter,
  trace,
  traceparentOf,
  venusTracer,
} from './tracing.ts';
export { holdWritesForThisTurn } from './turn-writes.ts';
