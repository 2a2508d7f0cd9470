// The endpoint behind an `sbk_…` bearer credential, for /mcp. Only live endpoints
// (not revoked, not expired) match; anything else is simply no endpoint, and the
// surface answers 401 without saying which of the reasons applied.

import type { Queryable } from '../db/pool.js';
import { hashSecret } from '../identity/secrets.js';
import { authenticateEndpoint, type Endpoint } from '../store/endpoints.js';

export type { Endpoint } from '../store/endpoints.js';

/** A credential looks like `sbk_` and 43 base64url characters; others are not looked up. */
const CREDENTIAL = /^sbk_[A-Za-z0-9_-]{20,100}$/;

export async function endpointForCredential(db: Queryable, bearer: string): Promise<Endpoint | null> {
  if (!CREDENTIAL.test(bearer)) return null;
  return authenticateEndpoint(db, hashSecret(bearer));
}
