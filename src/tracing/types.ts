// The tracing interface the rest of the code sees (docs/design/tracing.md): a span, the
// options of a new one, the statement tracer db/pool.ts calls, and what builds them. Types
// only, so both the switch in ./index.ts and the OpenTelemetry side in ./otel.ts, which
// ./index.ts loads only when tracing is on, can name them.

import type { TracingConfig } from '../config/index.js';

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** One span, as the code that made it sees it. */
export interface TraceSpan {
  setAttribute(key: string, value: AttributeValue): void;
  /** Links this span to a stored W3C traceparent (a todo's); null or malformed: nothing. */
  link(traceparent: string | null | undefined): void;
  /** Marks the span failed, with what failed (an error code, or an exception's message). */
  fail(message: string): void;
  /** Idempotent: a second end (an aborted request answered anyway) does nothing. */
  end(): void;
}

export interface SpanOptions {
  /**
   * A W3C traceparent to start under (the `traceparent` header, an MCP call's
   * `_meta.traceparent`); absent or malformed: the active context's span, if any.
   */
  parent?: string | null | undefined;
  /** A new trace whatever is active (a schedule's occurrence, a sweep tick). */
  root?: boolean;
  attributes?: Attributes;
  /** Stored traceparents this span acts on (docs/design/tracing.md, "A todo's trace"). */
  links?: ReadonlyArray<string | null | undefined>;
  /** `server` for a request answered here, `client` for one sent from here; default `internal`. */
  kind?: 'server' | 'client' | 'internal';
}

/**
 * What db/pool.ts calls around each statement (structurally db/pool.ts's QueryObserver):
 * null from `start` when no span is active, so a query outside any traced work costs one
 * context read.
 */
export interface QueryTracer {
  start(text: string): { end(error?: unknown): void } | null;
  /** Binds a callback to the caller's context (pg-pool hands a freed client to a waiter from the releaser's). */
  bind<F extends (...args: never[]) => unknown>(fn: F): F;
}

export interface Tracing {
  /** False: every call below is a no-op (the hot paths may test this first). */
  readonly enabled: boolean;
  start(name: string, options?: SpanOptions): TraceSpan;
  /** Runs fn with the span as the active context (its children and SQL hang under it). */
  activate<T>(span: TraceSpan, fn: () => T): T;
  /** start, activate, end: a throw marks the span failed and is rethrown. */
  run<T>(name: string, options: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T>;
  /** The active span's context as a W3C traceparent; null when none is active. */
  traceparent(): string | null;
  /** Links the active span (the verb's) to a stored traceparent. */
  linkActive(traceparent: string | null | undefined): void;
  /** The statement spans for the pool; null when tracing is off (the pool is left as it is). */
  readonly queries: QueryTracer | null;
  /** Flushes what is buffered and stops exporting (the server's stop()). */
  shutdown(): Promise<void>;
}

/**
 * What a test hands in instead of the OTLP exporter (an InMemorySpanExporter): spans are
 * exported one by one as they end (SimpleSpanProcessor), so a test reads them at once.
 * Typed loosely here so that this module names no SDK type.
 */
export interface TracingOverride {
  exporter: unknown;
}

export interface TracingOptions {
  config: TracingConfig;
  instanceId: string;
  version: string;
  override?: TracingOverride;
}
