// Waiting for PostgreSQL at start: each database step of the start sequence runs through
// retryUnavailable, which retries it while the database cannot be reached (down,
// restarting, refusing us) with capped backoff, logging one line per attempt and telling
// `notReady` why (the start sequence keeps /readyz's reason current with it). Any other
// error is thrown: a bad migration must stop the start.

import type { Logger } from 'pino';
import { databaseProblem, problemDetail, type DatabaseProblem } from './unavailable.js';

export interface RetryOptions {
  /** Told each time a step fails because the database cannot be reached, and why. */
  notReady: (problem: DatabaseProblem, detail: string) => void;
  log: Logger;
  /** host:port of the database, for the log line. */
  where: string;
  /** Aborts the wait (a signal during start); the step's promise rejects with the reason. */
  signal?: AbortSignal;
  /** First delay and its cap; default 0.5 s → 5 s. */
  backoff?: { initialMs: number; maxMs: number };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

function codeOf(err: unknown): string {
  const e = err instanceof AggregateError && err.errors.length > 0 ? (err.errors[0] as unknown) : err;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'no answer';
}

/** "2s", "0.5s": the delay as the log line says it. */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))}s`;
}

/** Runs `step` until it succeeds or fails for a reason other than an unreachable database. */
export async function retryUnavailable<T>(step: () => Promise<T>, o: RetryOptions): Promise<T> {
  const { initialMs, maxMs } = o.backoff ?? { initialMs: 500, maxMs: 5_000 };
  let delay = initialMs;
  let failures = 0;
  for (;;) {
    if (o.signal?.aborted) throw o.signal.reason as Error;
    try {
      const result = await step();
      if (failures > 0) o.log.info({ attempts: failures + 1 }, `database at ${o.where} reachable again`);
      return result;
    } catch (err) {
      const problem = databaseProblem(err);
      if (!problem) throw err;
      failures += 1;
      const detail = problemDetail(err);
      o.notReady(problem, detail);
      const what = problem === 'database_rejected' ? 'refused our connection' : 'not reachable';
      o.log.warn(
        { reason: problem, detail, attempt: failures, retry_in_ms: delay },
        `database ${what} at ${o.where} (${codeOf(err)}); retrying in ${seconds(delay)}`,
      );
      await sleep(delay, o.signal);
      delay = Math.min(delay * 2, maxMs);
    }
  }
}
