// Tracing on: OpenTelemetry's trace SDK behind the Tracing interface of ./index.ts. Only
// ever imported dynamically (index.ts), so an untraced process never loads it
// (docs/design/tracing.md, "Off costs nothing").
//
// Each instance gets its own BasicTracerProvider (two instances in one test process must
// not share one); the AsyncLocalStorage context manager is process-wide, registered by
// the first instance that traces. The OTLP exporter is chosen by the protocol; the
// exporters read the rest of the standard OTEL_EXPORTER_OTLP_* variables (headers,
// timeout, compression) themselves.

import {
  context,
  trace,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { parseTraceParent } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { QueryTracer, SpanOptions, TraceSpan, Tracing, TracingOptions } from './types.js';

/**
 * The statement text kept on a SQL span: enough to tell statements apart, short enough
 * that a bulk insert's long text does not dominate the export. Statements are
 * parameterized, so the text never holds a value a caller sent.
 */
export const MAX_STATEMENT_CHARS = 300;

/** Distinct statement texts whose span name and attributes are kept (see `describe`). */
const MAX_DESCRIBED = 1_000;

/** A span as index.ts hands it out; `inner` is what activate() puts in the context. */
class OtelSpan implements TraceSpan {
  private ended = false;
  constructor(readonly inner: Span) {}
  setAttribute(key: string, value: string | number | boolean): void {
    this.inner.setAttribute(key, value);
  }
  link(traceparent: string | null | undefined): void {
    const target = spanContextOf(traceparent);
    if (target) this.inner.addLink({ context: target });
  }
  fail(message: string): void {
    this.inner.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.inner.end();
  }
}

/** A stored or received traceparent's span context; null when absent or malformed. */
function spanContextOf(traceparent: string | null | undefined): SpanContext | null {
  if (!traceparent) return null;
  return parseTraceParent(traceparent);
}

function traceparentOf(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** `trace_id` and `span_id` of the active span, for the logger's mixin; {} outside a span. */
export function activeSpanFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const sc = span.spanContext();
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/** The first keyword of a statement (SELECT, WITH, INSERT, BEGIN, …): db.operation. */
export function operationOf(text: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(text);
  return match?.[1]?.toUpperCase() ?? 'UNKNOWN';
}

/** One line, at most MAX_STATEMENT_CHARS: db.statement. */
export function boundedStatement(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_STATEMENT_CHARS ? flat : `${flat.slice(0, MAX_STATEMENT_CHARS - 1)}…`;
}

function contextManagerOnce(): void {
  // setGlobalContextManager refuses a second registration (it returns false): the first
  // tracing instance in the process registers it, and every later one shares it.
  const manager = new AsyncLocalStorageContextManager();
  if (context.setGlobalContextManager(manager)) manager.enable();
}

/**
 * A test's exporter, shared by several instances: the processor's shutdown must not stop
 * it (the test reads it after the first instance stopped).
 */
function unowned(exporter: SpanExporter): SpanExporter {
  return {
    export: (spans: ReadableSpan[], done) => exporter.export(spans, done),
    shutdown: async () => undefined,
    forceFlush: async () => exporter.forceFlush?.(),
  };
}

async function otlpExporter(protocol: 'http/protobuf' | 'http/json', url: string | null): Promise<SpanExporter> {
  const options = url ? { url } : {};
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}

export async function otelTracing(options: TracingOptions): Promise<Tracing> {
  contextManagerOnce();
  const processor: SpanProcessor = options.override
    ? new SimpleSpanProcessor(unowned(options.override.exporter as SpanExporter))
    : new BatchSpanProcessor(await otlpExporter(options.config.protocol, options.config.tracesUrl));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.config.serviceName,
      'service.instance.id': options.instanceId,
      'service.version': options.version,
    }),
    spanProcessors: [processor],
  });
  const tracer: Tracer = provider.getTracer('switchboard', options.version);

  const parentOf = (o: SpanOptions): Context => {
    if (o.root) return ROOT_CONTEXT;
    const remote = spanContextOf(o.parent);
    return remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : context.active();
  };
  const start = (name: string, o: SpanOptions = {}): OtelSpan => {
    const links: Link[] = [];
    for (const tp of o.links ?? []) {
      const target = spanContextOf(tp);
      if (target) links.push({ context: target });
    }
    return new OtelSpan(
      tracer.startSpan(
        name,
        {
          kind: o.kind === 'server' ? SpanKind.SERVER : o.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
          ...(o.attributes ? { attributes: o.attributes } : {}),
          ...(links.length > 0 ? { links } : {}),
          ...(o.root ? { root: true } : {}),
        },
        parentOf(o),
      ),
    );
  };
  const activate = <T>(span: TraceSpan, fn: () => T): T =>
    span instanceof OtelSpan ? context.with(trace.setSpan(context.active(), span.inner), fn) : fn();

  // The statements are the code's constants (a handful of texts, most of them named
  // prepared statements), so each one's name and attributes are worked out once; the
  // bound keeps an unexpected stream of distinct texts from growing it without end.
  const described = new Map<string, { name: string; attributes: Record<string, string> }>();
  const describe = (text: string) => {
    let found = described.get(text);
    if (!found) {
      const operation = operationOf(text);
      found = {
        name: `pg ${operation}`,
        attributes: { 'db.system': 'postgresql', 'db.operation': operation, 'db.statement': boundedStatement(text) },
      };
      if (described.size < MAX_DESCRIBED) described.set(text, found);
    }
    return found;
  };
  const queries: QueryTracer = {
    start(text) {
      const parent = trace.getSpan(context.active());
      if (!parent?.isRecording()) return null;
      const { name, attributes } = describe(text);
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes });
      return {
        end(error) {
          if (error !== undefined) {
            span.setStatus({
              code: SpanStatusCode.ERROR,
              message: (error as { code?: string }).code ?? (error as Error).message,
            });
          }
          span.end();
        },
      };
    },
    bind: (fn) => context.bind(context.active(), fn),
  };

  return {
    enabled: true,
    start,
    activate,
    async run(name, o, fn) {
      const span = start(name, o);
      try {
        return await activate(span, () => fn(span));
      } catch (err) {
        span.fail(err instanceof Error ? err.message : String(err));
        throw err;
      } finally {
        span.end();
      }
    },
    traceparent() {
      const span = trace.getActiveSpan();
      return span ? traceparentOf(span.spanContext()) : null;
    },
    linkActive(traceparent) {
      const target = spanContextOf(traceparent);
      if (target) trace.getActiveSpan()?.addLink({ context: target });
    },
    queries,
    shutdown: () => provider.shutdown(),
  };
}
