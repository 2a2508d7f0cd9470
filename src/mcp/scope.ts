// What every /mcp request meets before its route (docs/design/mcp-surface.md): a lenient
// JSON body parser (an empty body is none, a malformed one is answered as a JSON-RPC parse
// error by the route), the Origin rule, and the host's error mapping with a body over the
// limit answered in JSON-RPC. Shared by the session routes and the 2026-07-28 leg, which
// see only requests that passed them.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { BODY_LIMIT } from '../http/app.js';
import { handleError } from '../http/errors.js';
import { originAllowed } from '../http/hosts.js';

/** What the SDK answers refusals of a request with (not acceptable, conflict, bad version, origin). */
export const REFUSED = -32000;
const INVALID_REQUEST = -32600;

/** The body of a POST that was not JSON: answered as a JSON-RPC parse error, not an API error. */
export const NOT_JSON = Symbol('not JSON');

/** A JSON-RPC error with no id, as the SDK answers a request it refuses before reading it. */
export function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.status(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** Lenient JSON for /mcp only: an empty body (a DELETE or GET sent with a JSON content type) is none. */
function jsonBodies(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(null, NOT_JSON);
    }
  });
}

/**
 * The host's error mapping, except that a body over the limit is a JSON-RPC error here
 * (HTTP 413, -32600, id null) like every other refusal on /mcp, not the API's error body.
 */
function mcpErrors(scope: FastifyInstance): void {
  scope.setErrorHandler((err: Error, request, reply) => {
    if ((err as { statusCode?: number }).statusCode === 413) {
      const mib = BODY_LIMIT / (1024 * 1024);
      return rpcError(reply, 413, INVALID_REQUEST, `Invalid Request: the body is larger than the ${mib} MiB limit`);
    }
    handleError(err, request, reply);
    return reply;
  });
}

/**
 * The MCP transport's Origin rule (docs/design/limits.md, "Host and Origin"): a browser
 * page from another origin must not drive /mcp, even with a credential it got hold of,
 * so a foreign Origin is 403 before authentication; no Origin (every non-browser
 * client) is fine.
 */
function originGuard(scope: FastifyInstance, origins: readonly string[]): void {
  scope.addHook('onRequest', async (request, reply) => {
    const check = { origins, host: request.headers.host, protocol: request.protocol };
    if (originAllowed(request.headers.origin, check)) return;
    return rpcError(reply, 403, REFUSED, 'Forbidden: Origin is not one this server goes by');
  });
}

/** Sets up a scope that serves /mcp: its body parser, its error mapping, its Origin rule. */
export function mcpScope(scope: FastifyInstance, allowedOrigins: readonly string[]): void {
  jsonBodies(scope);
  mcpErrors(scope);
  originGuard(scope, allowedOrigins);
}
