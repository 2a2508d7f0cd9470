// PostgreSQL error codes translated into domain errors, here and nowhere else.

import { AppError } from '../domain/errors.js';
import { databaseTimeout, isDatabaseUnavailable } from '../db/unavailable.js';

const UNIQUE_VIOLATION = '23505';

/**
 * Unique violations become `conflict` (naming `field` when given); lost connections,
 * lock waits past lock_timeout and statements past statement_timeout `unavailable` (all
 * retryable).
 */
export function translatePgError(err: unknown, conflictMessage: string, field?: string): unknown {
  const code = (err as { code?: unknown }).code;
  if (code === UNIQUE_VIOLATION) {
    return new AppError('conflict', conflictMessage, field ? { field } : undefined, { cause: err });
  }
  if (isDatabaseUnavailable(err)) {
    return new AppError('unavailable', 'the database is unavailable; retry shortly', undefined, { cause: err });
  }
  const timedOut = databaseTimeout(err);
  if (timedOut) return new AppError('unavailable', timedOut, undefined, { cause: err });
  return err;
}
