// Is this error the database being unreachable (down, restarting, refusing connections),
// as opposed to a bad statement or a bug? Such errors are retried at start, answer
// `unavailable` (503) on requests and never crash the process.

/** Socket-level failures of reaching the server. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
]);

/** SQLSTATEs of a server that is shutting down, starting up or out of connection slots. */
const SERVER_GONE = new Set(['57P01', '57P02', '57P03', '53300', '57P05']);

// node-postgres raises these as plain Errors without a code.
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  // pg.Client's own connect timer (the per-host SWITCHBOARD_DB_CONNECT_TIMEOUT).
  'timeout expired',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

export type DatabaseProblem = 'database_unreachable' | 'database_rejected';

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Classifies a connection problem: unreachable (network, server down or starting),
 * rejected (authentication, missing database: an operator must act, but the server keeps
 * retrying), or null for any other error.
 */
export function databaseProblem(err: unknown): DatabaseProblem | null {
  if (err instanceof AggregateError) {
    for (const inner of err.errors) {
      const problem = databaseProblem(inner);
      if (problem) return problem;
    }
  }
  const code = codeOf(err);
  if (code !== undefined) {
    if (NETWORK.has(code) || SERVER_GONE.has(code) || code.startsWith('08')) return 'database_unreachable';
    if (code.startsWith('28') || code === '3D000') return 'database_rejected';
  }
  const message = err instanceof Error ? err.message : '';
  if (PG_MESSAGES.some((m) => message.includes(m))) return 'database_unreachable';
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== err ? databaseProblem(cause) : null;
}

/** True when the error means the database cannot be reached right now. */
export function isDatabaseUnavailable(err: unknown): boolean {
  return databaseProblem(err) !== null;
}

/** A short, credential-free description: "connect ECONNREFUSED 127.0.0.1:5999". */
export function problemDetail(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return problemDetail(err.errors[0]);
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/postgres(ql)?:\/\/[^\s]*/g, '<database url>').slice(0, 300);
}

/** The message of `unavailable` when a lock wait passed lock_timeout (the same text on every edge). */
export const LOCK_TIMEOUT_MESSAGE = 'a row this request needs is locked by another operation; retry shortly';

/** The message of `unavailable` when a statement was cancelled (statement_timeout, or by an operator). */
export const STATEMENT_TIMEOUT_MESSAGE =
  'the database cancelled a statement of this request (it ran past SWITCHBOARD_STATEMENT_TIMEOUT, or an operator cancelled it); retry, or narrow the request';

/**
 * A statement that the database gave up on while it is up, so the caller may retry:
 * lock_not_available (55P03, a lock wait past lock_timeout — the holder will finish) or
 * query_canceled (57014, statement_timeout or pg_cancel_backend). Answers the message every
 * edge sends with `unavailable`, or null for any other error (docs/design/scale.md).
 */
export function databaseTimeout(err: unknown): string | null {
  const code = codeOf(err);
  if (code === '55P03') return LOCK_TIMEOUT_MESSAGE;
  if (code === '57014') return STATEMENT_TIMEOUT_MESSAGE;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== err ? databaseTimeout(cause) : null;
}
