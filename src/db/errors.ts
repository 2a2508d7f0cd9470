// Whether an error means the database connection was lost or could not be had: a server
// that cut it (SQLSTATE class 08, 57P — pg_terminate_backend, a shutdown or restart), the
// socket failing, or node-pg's own messages for a dead or unobtainable client. Such a
// request failed for want of the database, not because of a bug: the edges answer it as
// `unavailable` (retry shortly), never `internal`.

const CONNECTION_CLASSES = ['08', '57P'];
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
const CLIENT_MESSAGES = [
  'Connection terminated',
  'Connection terminated unexpectedly',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
];

function lostHere(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CLASSES.some((c) => code.startsWith(c)) || SOCKET_CODES.has(code))) {
    return true;
  }
  return CLIENT_MESSAGES.includes(err.message);
}

/** The error, or the error it wraps (`cause`, one level), is a lost database connection. */
export function isConnectionLost(err: unknown): boolean {
  return lostHere(err) || (err instanceof Error && lostHere(err.cause));
}
