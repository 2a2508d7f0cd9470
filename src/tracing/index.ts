// Traces (docs/design/tracing.md): the small interface the rest of the code sees, and the
// switch that decides whether OpenTelemetry is loaded at all. Off (no OTLP endpoint and
// no exporter handed in by a test), nothing of OpenTelemetry is imported — not even the
// API — and every span is the one shared no-op below, so a hot path pays one boolean test
// or one empty call. On, ./otel.ts is imported dynamically and builds this instance's own
// provider (docs/design/tracing.md, "One provider per instance").
//
// The composition root builds one Tracing (src/main.ts) and hands it down in deps; no
// module asks a global for a tracer.

import type { TraceSpan, Tracing, TracingOptions } from './types.js';

export type {
  AttributeValue,
  Attributes,
  QueryTracer,
  SpanOptions,
  TraceSpan,
  Tracing,
  TracingOptions,
  TracingOverride,
} from './types.js';

const NOOP_SPAN: TraceSpan = {
  setAttribute: () => undefined,
  link: () => undefined,
  fail: () => undefined,
  end: () => undefined,
};

/** Tracing off: no span, no import, no cost beyond the call. */
export const NO_TRACING: Tracing = {
  enabled: false,
  start: () => NOOP_SPAN,
  activate: (_span, fn) => fn(),
  run: (_name, _options, fn) => fn(NOOP_SPAN),
  traceparent: () => null,
  linkActive: () => undefined,
  queries: null,
  shutdown: async () => undefined,
};

/** The instance's tracing: OpenTelemetry when configured or handed an exporter, else NO_TRACING. */
export async function createTracing(options: TracingOptions): Promise<Tracing> {
  if (!options.config.enabled && !options.override) return NO_TRACING;
  const { otelTracing } = await import('./otel.js');
  return otelTracing(options);
}

/**
 * The log fields of the active span (`trace_id`, `span_id`), for the logger's mixin; only
 * loaded when tracing is on, so the logger of an untraced process has no mixin at all.
 */
export async function traceLogFields(): Promise<() => Record<string, string>> {
  const { activeSpanFields } = await import('./otel.js');
  return activeSpanFields;
}
