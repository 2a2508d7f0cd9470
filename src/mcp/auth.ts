// Bearer authentication for /mcp: `Authorization: Bearer sbk_…` (or an OAuth access token
// `sbo_…`, docs/design/oauth.md) names a live endpoint. A missing, malformed, unknown,
// revoked or expired credential is one answer — 401 with `WWW-Authenticate: Bearer
// realm="switchboard", resource_metadata="…"` (RFC 9728 §5.1: where an OAuth client finds
// the authorization server) — so the reply is no oracle. Each such
// request spends from its address's unauthenticated bucket (limits.ts); once that is
// empty the address is answered 429 before any credential is looked up, so a flood of
// guesses never reaches the database.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { isCredentialShaped, type Endpoint } from '../endpoints/credentials.js';
import { bearerOf } from '../http/auth.js';
import type { Services } from '../services.js';
import { errorBody } from '../http/errors.js';
import { noteEndpoint } from '../http/request-log.js';
import { refuse, type McpLimits } from './limits.js';

export interface Caller {
  endpoint: Endpoint;
  token: string;
  /** Whether the request's Mcp-Session-Id names a live session of this endpoint; null without one. */
  sessionLive: boolean | null;
  /** Set when the bearer is an OAuth access token: the grant a session it opens belongs to. */
  grantId?: string;
}

/** JSON-RPC's code for a request that is not a valid one. */
const INVALID_REQUEST = -32600;

/** How many JSON-RPC messages a body carries: a batch's length (at least one), else one. */
function messagesIn(body: unknown): number {
  return Array.isArray(body) ? Math.max(1, body.length) : 1;
}

/**
 * The caller (and the state of the session it names, in the same round trip), or null
 * after answering 401, or 429 when the address or the credential is past its limit.
 */
export async function authenticateMcp(
  credentials: Services['credentials'],
  limits: McpLimits,
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string | null,
): Promise<Caller | null> {
  const bearer = bearerOf(request);
  const token = bearer !== null && isCredentialShaped(bearer) ? bearer : null;
  const early = token ? limits.beforeLookup(request.ip) : limits.failed(request.ip);
  if (early) {
    await refuse(reply, early);
    return null;
  }
  const found = token ? await credentials.find(token, sessionId) : null;
  if (token && found) {
    noteEndpoint(request, found.endpoint.slug);
    const messages = messagesIn(request.body);
    const oversized = limits.oversizedBatch(messages);
    if (oversized) {
      await reply.status(400).send({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: oversized } });
      return null;
    }
    const spent = limits.request(found.endpoint.id, messages);
    if (spent.refusal) {
      await refuse(reply, spent.refusal, spent.state);
      return null;
    }
    return { ...found, token };
  }
  if (token) limits.failed(request.ip);
  await reply
    .status(401)
    .header('WWW-Authenticate', credentials.challenge)
    .send(
      errorBody(
        'unauthenticated',
        'send Authorization: Bearer sbk_… with a live endpoint credential, or an OAuth token',
      ),
    );
  return null;
}
