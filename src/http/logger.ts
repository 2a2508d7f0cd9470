// The process logger: pino at the configured level, with the fields that may carry a
// secret redacted wherever a log call puts them — the request's Authorization and Cookie
// headers, and any field named credential, token, password or secret at the top level or
// one level down (`{ err: { token } }`). Redaction is a backstop: code still never logs a
// secret on purpose (the first-run setup link goes to stderr, not the log).
//
// Lines say their level by name ("info", not 30) and their time as ISO 8601, which a log
// pipeline reads without a pino-specific mapping. With tracing on, each line written while
// a span is active carries its `trace_id` and `span_id` (docs/design/tracing.md, "Logs"),
// through a mixin the caller loads only then: an untraced process has no mixin at all.

import { pino, type DestinationStream, type Logger } from 'pino';

const SECRET_FIELDS = ['credential', 'token', 'password', 'secret'];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
];

export interface LoggerOptions {
  /** Fields added to every line (src/tracing/: the active span's ids); absent: none. */
  mixin?: () => Record<string, string>;
}

/** A pino logger with the secret fields redacted; `destination` defaults to stdout. */
export function createLogger(level: string, destination?: DestinationStream, extra: LoggerOptions = {}): Logger {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(extra.mixin ? { mixin: extra.mixin } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
