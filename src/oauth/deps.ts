// What the OAuth use cases need: the database, the public URL every URL and the resource
// indicator are built from, the token lifetimes, the credential answers a revocation
// drops, and the quotas a vend on the consent page counts against.

import type { Pool } from '../db/pool.js';
import type { CredentialForgetting } from '../endpoints/credentials.js';
import type { QuotaDeps } from '../quotas/check.js';

export interface OAuthDeps extends QuotaDeps {
  db: Pool;
  publicUrl: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  credentials?: CredentialForgetting;
}
