// AppError → HTTP: the one mapping table for the API. Internal errors are logged with
// their cause and answered with a fixed message.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { databaseTimeout, isDatabaseUnavailable } from '../db/unavailable.js';

/**
 * Whether a failure is PostgreSQL being unreachable, or a statement it gave up on (a lock
 * wait past lock_timeout, a statement past statement_timeout): all answered `unavailable`
 * (retryable), for every surface's mapping.
 */
export { databaseTimeout, isDatabaseUnavailable };
import { AppError, type ErrorCode } from '../domain/errors.js';

export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  failed_precondition: 409,
  deferred: 409,
  queue_full: 409,
  entry_not_found: 404,
  queue_changed: 409,
  resource_exhausted: 429,
  admission_unavailable: 503,
  unavailable: 503,
  internal: 500,
};

/** The message of `unavailable` while PostgreSQL cannot be reached. */
export const DATABASE_UNAVAILABLE = 'the database is unavailable; retry shortly';

export function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>) {
  return { error: details ? { code, message, details } : { code, message } };
}

/** Fastify error handler: AppError by its code, Fastify's own 4xx as invalid input. */
export function handleError(err: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply): void {
  if (err instanceof AppError) {
    // A refusal that says when to come back (a rate limit, the live-todo quota) says it in
    // the header clients and proxies read too.
    const retry = err.details?.retry_after_seconds;
    if (err.code === 'resource_exhausted' && typeof retry === 'number') void reply.header('retry-after', String(retry));
    void reply.status(HTTP_STATUS[err.code]).send(errorBody(err.code, err.message, err.details));
    return;
  }
  const status = (err as FastifyError).statusCode;
  if (status === 413) {
    const mib = (request.routeOptions.bodyLimit ?? 1024 * 1024) / (1024 * 1024);
    void reply.status(413).send(errorBody('invalid_argument', `body: larger than the ${mib} MiB limit`));
    return;
  }
  if (status !== undefined && status >= 400 && status < 500) {
    // The content-type parser's refusals (not JSON, an unsupported media type) are about the body as a whole.
    const body = (err as FastifyError).code?.startsWith('FST_ERR_CTP_') === true;
    void reply
      .status(400)
      .send(
        body
          ? errorBody('invalid_argument', `body: ${err.message}`, { field: 'body' })
          : errorBody('invalid_argument', err.message),
      );
    return;
  }
  if (isDatabaseUnavailable(err)) {
    request.log.warn({ err: { message: err.message } }, 'request failed: the database is unavailable');
    void reply.status(503).header('retry-after', '2').send(errorBody('unavailable', DATABASE_UNAVAILABLE));
    return;
  }
  const timedOut = databaseTimeout(err);
  if (timedOut) {
    request.log.warn({ err: { message: err.message } }, 'request failed: the database gave up on a statement');
    void reply.status(503).header('retry-after', '1').send(errorBody('unavailable', timedOut));
    return;
  }
  request.log.error({ err }, 'request failed');
  void reply.status(500).send(errorBody('internal', 'internal error; the server log has the details'));
}

/** Fastify's frameworkErrors: the router refused the URL (bad percent-encoding, an over-long parameter). */
export function routerError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const message =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'path: a path parameter is longer than 100 characters'
      : 'path: not a valid URL (malformed percent-encoding)';
  void reply.status(400).send(errorBody('invalid_argument', message, { field: 'path' }));
}
