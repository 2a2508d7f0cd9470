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

const LEVEL_WIDTH = 5;
const COLORS: Record<string, string> = { fatal: '35', error: '31', warn: '33', info: '32', debug: '36', trace: '90' };
/** Fields every line has, or that say nothing to a person reading one instance's output. */
const QUIET_FIELDS = new Set(['time', 'level', 'msg', 'pid', 'hostname']);

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One JSON log line as a person reads it: `12:04:05.123 INFO  message key=value …`, an
 * error's stack indented below. A line that is not JSON passes through unchanged.
 */
export function prettyLine(json: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = typeof entry.level === 'string' ? entry.level : 'info';
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const label = level.toUpperCase().padEnd(LEVEL_WIDTH);
  const shown = color && COLORS[level] ? `\u001b[${COLORS[level]}m${label}\u001b[0m` : label;
  const fields: string[] = [];
  let stack = '';
  for (const [key, value] of Object.entries(entry)) {
    if (QUIET_FIELDS.has(key)) continue;
    const err = value as { message?: unknown; stack?: unknown } | null;
    if (key === 'err' && typeof err === 'object' && err !== null && typeof err.message === 'string') {
      fields.push(`err=${fieldValue(err.message)}`);
      if (typeof err.stack === 'string') stack = err.stack.split('\n').slice(1).join('\n');
      continue;
    }
    fields.push(`${key}=${fieldValue(value)}`);
  }
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  const head = [time, shown, msg, ...fields].filter((part) => part !== '').join(' ');
  return `${head}\n${stack ? `${stack}\n` : ''}`;
}

/** A pino destination writing each line through prettyLine (SWITCHBOARD_LOG_FORMAT). */
export function prettyDestination(out: NodeJS.WritableStream & { isTTY?: boolean }): DestinationStream {
  const color = out.isTTY === true;
  return { write: (line: string) => void out.write(prettyLine(line, color)) };
}

/** Whether `serve` writes readable lines: `pretty`, or `auto` on a terminal. */
export function wantsPretty(format: 'auto' | 'json' | 'pretty', out: { isTTY?: boolean }): boolean {
  return format === 'pretty' || (format === 'auto' && out.isTTY === true);
}
