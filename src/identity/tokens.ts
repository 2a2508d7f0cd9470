// API tokens a human manages: list, mint a workflow token for automation, revoke.
// Secrets are shown once, at minting.

import { z } from 'zod';
import { AppError, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { dateTime, maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import { insertApiToken, listApiTokens, revokeApiToken, type ApiToken } from '../store/api-tokens.js';
import type { IdentityDeps, Principal } from './principal.js';
import { newSecret } from './secrets.js';
import { withQuota, type QuotaDeps } from '../quotas/check.js';

export const mintInput = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').check(maxLength(100)),
  kind: z.literal('workflow').optional(),
  expires_at: dateTime('must be an RFC 3339 time').optional(),
});

export function listTokens(deps: IdentityDeps, principal: Principal): Promise<ApiToken[]> {
  return listApiTokens(deps.db, principal.human.id);
}

export async function mintToken(
  deps: IdentityDeps & QuotaDeps,
  principal: Principal,
  input: unknown,
  now: Date,
): Promise<{ token: ApiToken; secret: string }> {
  const data = parseInput(mintInput, input);
  const expiresAt = data.expires_at ? new Date(data.expires_at) : null;
  if (expiresAt && expiresAt <= now)
    throw new AppError('invalid_argument', 'expires_at: must be in the future', { field: 'expires_at' });
  const { secret, hash } = newSecret('sbt');
  const token = await withQuota(deps.db, deps, 'apiTokens', { humanId: principal.human.id }, (tx) =>
    insertApiToken(tx, {
      id: newId('tk'),
      humanId: principal.human.id,
      kind: 'workflow',
      name: data.name,
      tokenHash: hash,
      expiresAt,
    }),
  );
  return { token, secret };
}

export async function revokeToken(deps: IdentityDeps, principal: Principal, id: string): Promise<ApiToken> {
  const token = await revokeApiToken(deps.db, principal.human.id, id);
  if (!token) throw notFound('token', id);
  return token;
}
