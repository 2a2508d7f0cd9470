// Retry backoff (docs/design/todos.md, "Settling a claim"): the schedule a failed todo
// waits before its next attempt, and its jitter. Pure; the fail statement in
// src/store/claims.ts applies the same arithmetic per row.

/** A todo's own backoff, when it has one (retry_backoff on create). */
export interface Backoff {
  baseSeconds: number;
  maxSeconds: number;
}

/** The server's backoff: 30 s doubling, capped at 15 min (a flaky dependency gets ~6 tries an hour). */
export const DEFAULT_BACKOFF: Backoff = { baseSeconds: 30, maxSeconds: 900 };

/**
 * Bounds of retry_backoff: a base above a day or a cap above a week is a todo nobody will
 * see again; the migration's CHECKs hold the same numbers.
 */
export const BACKOFF_BOUNDS = { baseMax: 86_400, maxMax: 604_800 } as const;

/**
 * The jitter of a retry delay: each failure waits the scheduled delay times a factor drawn
 * uniformly from [1 - RETRY_JITTER, 1 + RETRY_JITTER], so a burst of todos that failed
 * together (one outage) does not come back as one burst. ±20 % spreads a burst over
 * 40 % of the delay while keeping the schedule recognisable.
 */
export const RETRY_JITTER = 0.2;

/**
 * Doublings stop counting here: 2^30 times any base is past every cap, and the exponent
 * stays far from float overflow at max_attempts 100.
 */
export const MAX_DOUBLINGS = 30;

/**
 * Retry delay after failed attempt `attempt` (1-based), before jitter: the base doubling
 * each attempt, capped at the maximum. The fail statement (store/claims.ts) computes the
 * same arithmetic per row, since a todo may carry its own backoff; the tests hold the two
 * to this function.
 */
export function retryDelaySeconds(attempt: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  const doublings = Math.min(MAX_DOUBLINGS, Math.max(0, attempt - 1));
  return Math.min(backoff.maxSeconds, backoff.baseSeconds * 2 ** doublings);
}

/** The range a jittered delay falls in. */
export function jitteredDelayBounds(delaySeconds: number, jitter = RETRY_JITTER): { min: number; max: number } {
  return { min: delaySeconds * (1 - jitter), max: delaySeconds * (1 + jitter) };
}
