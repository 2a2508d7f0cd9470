// The endpoint behind an `sbk_…` bearer credential, for /mcp. Only live endpoints
// (not revoked, not expired) match; anything else is simply no endpoint, and the
// surface answers 401 without saying which of the reasons applied.

import type { Queryable } from '../db/pool.js';
import { hashSecret } from '../identity/secrets.js';
import { authenticateEndpoint, authenticateEndpointSession, type Endpoint } from '../store/endpoints.js';

export type { Endpoint } from '../store/endpoints.js';

/** A credential looks like `sbk_` and 43 base64url characters; others are not looked up. */
const CREDENTIAL = /^sbk_[A-Za-z0-9_-]{20,100}$/;

export interface Credentialed {
  endpoint: Endpoint;
  /** When a session id was given: whether it names a live session of this endpoint (stamped as seen). */
  sessionLive: boolean | null;
}

/** The endpoint behind the bearer and, in the same round trip, the state of the named session. */
export async function endpointForCredential(
  db: Queryable,
  bearer: string,
  sessionId: string | null = null,
): Promise<Credentialed | null> {
  if (!CREDENTIAL.test(bearer)) return null;
  if (sessionId === null) {
    const endpoint = await authenticateEndpoint(db, hashSecret(bearer));
    return endpoint && { endpoint, sessionLive: null };
  }
  const row = await authenticateEndpointSession(db, hashSecret(bearer), sessionId);
  if (!row) return null;
  const { session_live: sessionLive, ...endpoint } = row;
  return { endpoint, sessionLive };
}
