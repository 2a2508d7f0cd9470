// The one error type of the domain. Each edge (HTTP, MCP, CLI) maps `code` through its
// own table; the message is written for whoever must act on it, a human or an agent.
// Internal errors never show their text to a client.

export type ErrorCode =
  /** The request is malformed: a field is missing, too long, of the wrong type, unknown. */
  | 'invalid_argument'
  /** The thing does not exist for this caller. Also for another tenant's rows: no oracle. */
  | 'not_found'
  /** It exists but is in the wrong state or held by someone else (e.g. a lost lease). */
  | 'conflict'
  /**
   * The change is refused because of the state of something else, which must change
   * first (e.g. disabling, demoting or deleting the last active admin).
   */
  | 'failed_precondition'
  /** The caller is authenticated but not allowed (ungranted verb, queue outside the grant). */
  | 'forbidden'
  /** The caller is not authenticated (missing, bad, revoked or expired credential). */
  | 'unauthenticated'
  /** A budget holds the work back until its window reopens (docs/design/admission.md). */
  | 'deferred'
  /** A budget cannot be evaluated (e.g. unknown zone): fail closed, nothing admitted. */
  | 'admission_unavailable'
  /** A rate or size limit was hit; retry later or send less. */
  | 'resource_exhausted'
  /** A session's message queue is at capacity (docs/design/message-queue.md). */
  | 'queue_full'
  /** No pending message with that id in that session (gone, in flight, or not editable by the caller). */
  | 'entry_not_found'
  /** A reorder did not name exactly the session's visible messages: refetch and retry. */
  | 'queue_changed'
  /** A dependency (the database) is unreachable; retry. */
  | 'unavailable'
  /** A bug or an unexpected failure; details are logged, never returned. */
  | 'internal';

export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export function invalidArgument(field: string, message: string): AppError {
  return new AppError('invalid_argument', `${field}: ${message}`, { field });
}

export function notFound(what: string, id: string): AppError {
  return new AppError('not_found', `${what} ${id} not found`, { id });
}

export function isAppError(err: unknown, code?: ErrorCode): err is AppError {
  return err instanceof AppError && (code === undefined || err.code === code);
}
