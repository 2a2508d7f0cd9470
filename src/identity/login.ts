// Sign-in with email and password for an API token of kind human (expiring after
// SWITCHBOARD_TOKEN_TTL unused); sign-out revokes it. A wrong email, a wrong password
// and a disabled human answer alike and take alike long.

import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import type { Queryable } from '../db/pool.js';
import { insertApiToken } from '../store/api-tokens.js';
import { getHumanForSignIn, type Human } from '../store/humans.js';
import type { IdentityDeps, Principal, TokenDeps } from './principal.js';
import { DECOY_PASSWORD_HASH, newSecret, verifyPassword } from './secrets.js';
import { revokeToken } from './tokens.js';

export const loginInput = z.strictObject({
  email: z.string().trim().min(1).check(maxLength(254)),
  password: z.string().min(1).check(maxLength(200)),
  token_name: z.string().trim().min(1).check(maxLength(100)).optional(),
});

/** The refusal of a password sign-in while SWITCHBOARD_PASSWORD_SIGNIN=off. */
export function refusePasswordSignIn(deps: IdentityDeps): void {
  if (deps.passwordSignIn === false) {
    throw new AppError(
      'failed_precondition',
      'password sign-in is turned off here (SWITCHBOARD_PASSWORD_SIGNIN=off): sign in on the board with the "Sign in with …" button of your organisation\'s provider',
      { field: 'password' },
    );
  }
}

/**
 * Checks an email and password; the human, or an `unauthenticated` error. A disabled
 * human gets the wrong-password answer after the same hash: whether an account exists
 * or is disabled is not told to whoever guesses at it.
 */
export async function verifyCredentials(deps: IdentityDeps, emailText: string, password: string): Promise<Human> {
  const found = await getHumanForSignIn(deps.db, emailText);
  const ok = await verifyPassword(password, found?.password_hash ?? DECOY_PASSWORD_HASH);
  if (!found || !found.password_hash || !ok || found.state !== 'active') {
    throw new AppError('unauthenticated', 'email or password is wrong');
  }
  const { password_hash: _hash, ...human } = found;
  return human;
}

export async function login(
  deps: TokenDeps,
  input: unknown,
): Promise<{ token: string; token_id: string; expires_at: Date | null; human: Human }> {
  refusePasswordSignIn(deps);
  const data = parseInput(loginInput, input);
  const human = await verifyCredentials(deps, data.email, data.password);
  return { ...(await issueLoginToken(deps.db, deps.tokenTtlSeconds, human.id, data.token_name ?? 'cli')), human };
}

/**
 * A login token (kind human, expiring SWITCHBOARD_TOKEN_TTL after its last use) for a human
 * already proven: by password here, by an approved browser sign-in in cli-login.ts. `db`
 * may be the caller's transaction.
 */
export async function issueLoginToken(
  db: Queryable,
  ttlSeconds: number,
  humanId: string,
  name: string,
): Promise<{ token: string; token_id: string; expires_at: Date | null }> {
  const { secret, hash } = newSecret('sbt');
  const token = await insertApiToken(db, {
    id: newId('tk'),
    humanId,
    kind: 'human',
    name,
    tokenHash: hash,
    expiresAt: null,
    ttlSeconds,
  });
  return { token: secret, token_id: token.id, expires_at: token.expires_at };
}

export async function logout(deps: IdentityDeps, principal: Principal): Promise<{ revoked: boolean }> {
  if (!principal.token) return { revoked: false };
  await revokeToken(deps, principal, principal.token.id);
  return { revoked: true };
}
