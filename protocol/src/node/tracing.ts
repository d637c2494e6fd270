import {
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { z } from 'zod';
import { TRACING_EXPORTER_NAMES } from '../settings.ts';

/** The API parts other packages use, so that only protocol depends on `@opentelemetry/api`. */
export { type Context, context, ROOT_CONTEXT, type Span, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * OpenTelemetry traces, off by default. Code creates spans through `@opentelemetry/api` only
 * ({@link venusTracer}), which does nothing until a process calls {@link startTracing}: then the
 * SDK, the async-hooks context manager and the exporter are loaded and registered. Between
 * processes a delegation's trace travels as a W3C `traceparent` in the job data
 * ({@link traceparentOf} / {@link contextFromTraceparent}).
 *
 * @example
 *   const tracing = await startTracing({ service: 'harness', exporter: settings.VENUS_TRACING });
 *   // on shutdown: await tracing?.shutdown();
 */
export const TRACER_NAME = 'realtime-venus';

/** VENUS_TRACING (or the standard OTEL_TRACES_EXPORTER): `otlp`, `console`, or `off`/`none`. */
export const TRACING_EXPORTERS = TRACING_EXPORTER_NAMES;
export type TracingExporter = (typeof TRACING_EXPORTERS)[number];

/** A W3C trace-context `traceparent` header value (version 00). */
export const TraceparentSchema = z.string().regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, 'a W3C traceparent');

const propagator = new W3CTraceContextPropagator();

export function venusTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** The `traceparent` of the span in `ctx` (the active context by default), or undefined when none is sampled. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** A context whose remote parent is the given `traceparent`; the root context when there is none. */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  if (traceparent === undefined) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

export interface StartTracingOptions {
  /** `service.name` of this process's spans. */
  service: string;
  /**
   * Where spans go: `otlp` (OTLP over HTTP; endpoint, headers and the rest from the standard
   * OTEL_EXPORTER_OTLP_* variables, read by the exporter), `console`, an exporter of the caller's
   * (tests: an InMemorySpanExporter), or `off`/`none`/undefined for no tracing.
   */
  exporter: TracingExporter | SpanExporter | undefined;
  /** Export each span as it ends instead of in batches (tests). Default false. */
  immediate?: boolean;
}

export interface Tracing {
  /** Flushes what is buffered and unregisters the provider. */
  shutdown(): Promise<void>;
}

/** Registers the global tracer provider; resolves to null when tracing is off. */
export async function startTracing(options: StartTracingOptions): Promise<Tracing | null> {
  const { exporter } = options;
  if (exporter === undefined || exporter === 'off' || exporter === 'none') return null;
  const sdk = await import('@opentelemetry/sdk-trace');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { resourceFromAttributes, defaultResource } = await import('@opentelemetry/resources');
  const spanExporter =
    exporter === 'otlp'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
      : exporter === 'console'
        ? new sdk.ConsoleSpanExporter()
        : exporter;
  const processor = options.immediate
    ? new sdk.SimpleSpanProcessor({ exporter: spanExporter })
    : new sdk.BatchSpanProcessor({ exporter: spanExporter });
  // The later resource's attributes win: the defaults (SDK, runtime) plus this process's name.
  const resource = defaultResource().merge(resourceFromAttributes({ 'service.name': options.service }));
  const provider = new sdk.TracerProvider({ resource, spanProcessors: [processor] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
