// Endpoint expiry: an endpoint past its expires_at is revoked at that instant (its
// credential already stops matching at expiry; this dead-letters its live todos).

import type { Pool } from '../db/pool.js';
import { listExpiredEndpoints, revokeEndpoint } from '../store/endpoints.js';
import type { Sweep } from './runner.js';
import type { CredentialForgetting } from '../endpoints/credentials.js';

/**
 * `credentials`: the process's credential answers, so an expired endpoint's leave at once
 * (without it they are refused anyway: every reuse checks the expiry, and the bus's
 * endpoint_revoked drops them).
 */
export function endpointExpirySweep(db: Pool, intervalMs: number, credentials?: CredentialForgetting): Sweep {
  return {
    name: 'endpoint_expiry',
    intervalMs,
    async run() {
      let expired = 0;
      let deadLettered = 0;
      for (const id of await listExpiredEndpoints(db, 100)) {
        const revoked = await revokeEndpoint(db, id);
        credentials?.forget(id);
        if (revoked) {
          expired += 1;
          deadLettered += revoked.dead_lettered;
        }
      }
      return { expired, dead_lettered: deadLettered };
    },
  };
}
