// Bearer authentication for /mcp: `Authorization: Bearer sbk_…` names a live endpoint.
// A missing, malformed, unknown, revoked or expired credential is one answer — 401 with
// `WWW-Authenticate: Bearer realm="switchboard"` — so the reply is no oracle.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/pool.js';
import type { CredentialCache, Endpoint } from '../endpoints/credentials.js';
import { bearerOf } from '../api/auth.js';
import { errorBody } from '../api/errors.js';
import { noteEndpoint } from '../api/request-log.js';

export interface Caller {
  endpoint: Endpoint;
  token: string;
  /** Whether the request's Mcp-Session-Id names a live session of this endpoint; null without one. */
  sessionLive: boolean | null;
}

/** The caller (and the state of the session it names, in the same round trip), or null after answering 401. */
export async function authenticateMcp(
  db: Queryable,
  credentials: CredentialCache,
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string | null,
): Promise<Caller | null> {
  const token = bearerOf(request);
  const found = token ? await credentials.endpointFor(db, token, sessionId) : null;
  if (token && found) {
    noteEndpoint(request, found.endpoint.slug);
    return { ...found, token };
  }
  await reply
    .status(401)
    .header('WWW-Authenticate', 'Bearer realm="switchboard"')
    .send(errorBody('unauthenticated', 'send Authorization: Bearer sbk_… with a live endpoint credential'));
  return null;
}
