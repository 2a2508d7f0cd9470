// Grants after consent (docs/design/oauth.md, "Revocation"): the board's list of a human's
// authorized clients per endpoint, and revoking a grant — by its human on the board, by
// the client (RFC 7009), or by the server when a code is replayed or a rotated refresh
// token comes back. Revoking kills every token of the grant and closes the MCP sessions it
// opened at once: the rows in one transaction, `session_closed` on commit for every
// instance, and this process's credential answers dropped before the call returns.

import { withTx } from '../db/pool.js';
import { notFound } from '../domain/errors.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import { clientGrantIds, grantOwner, listEndpointGrants, revokeGrants, type GrantListing } from '../store/oauth.js';

export type { GrantListing } from '../store/oauth.js';
import type { OAuthDeps } from './deps.js';

export type RevokeReason = 'client_revoked' | 'code_replayed' | 'refresh_reused' | 'by_human';

/** Revokes these grants and closes their sessions; returns how many sessions closed. */
export async function endGrants(
  deps: Pick<OAuthDeps, 'db' | 'credentials'>,
  ids: string[],
  reason: RevokeReason,
): Promise<{ sessions_closed: number }> {
  if (ids.length === 0) return { sessions_closed: 0 };
  const ended = await withTx(deps.db, (tx) => revokeGrants(tx, ids, reason));
  for (const endpointId of ended.endpoint_ids) deps.credentials?.forget(endpointId);
  return { sessions_closed: ended.sessions_closed };
}

/** The authorized clients of one of this human's endpoints. */
export async function listGrants(deps: EndpointDeps, humanId: string, endpointRef: string): Promise<GrantListing[]> {
  const endpoint = await resolveEndpoint(deps, humanId, endpointRef);
  return listEndpointGrants(deps.db, humanId, endpoint.id);
}

/**
 * The human revokes a client: every grant they gave that client (on any endpoint), so the
 * client keeps nothing of theirs. Another human's grant is not_found, like an unknown one.
 */
export async function revokeClientOf(deps: OAuthDeps, humanId: string, grantId: string) {
  const owner = await grantOwner(deps.db, grantId);
  if (!owner || owner.human_id !== humanId) throw notFound('grant', grantId);
  const ids = await clientGrantIds(deps.db, humanId, owner.client_id);
  return endGrants(deps, ids.includes(grantId) ? ids : [...ids, grantId], 'by_human');
}
