// Sign-in with email and password for an API token of kind human; sign-out revokes it.
// A wrong email and a wrong password answer alike and take alike long.

import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import { insertApiToken } from '../store/api-tokens.js';
import { getHumanForSignIn, type Human } from '../store/humans.js';
import type { IdentityDeps, Principal } from './principal.js';
import { DECOY_PASSWORD_HASH, newSecret, verifyPassword } from './secrets.js';
import { revokeToken } from './tokens.js';

const loginInput = z.strictObject({
  email: z.string().trim().min(1).check(maxLength(254)),
  password: z.string().min(1).check(maxLength(200)),
  token_name: z.string().trim().min(1).check(maxLength(100)).optional(),
});

/** Checks an email and password; the human, or an `unauthenticated` error. */
export async function verifyCredentials(deps: IdentityDeps, emailText: string, password: string): Promise<Human> {
  const found = await getHumanForSignIn(deps.db, emailText);
  const ok = await verifyPassword(password, found?.password_hash ?? DECOY_PASSWORD_HASH);
  if (!found || !found.password_hash || !ok) {
    throw new AppError('unauthenticated', 'email or password is wrong');
  }
  const { password_hash: _hash, ...human } = found;
  return human;
}

export async function login(
  deps: IdentityDeps,
  input: unknown,
): Promise<{ token: string; token_id: string; human: Human }> {
  const data = parseInput(loginInput, input);
  const human = await verifyCredentials(deps, data.email, data.password);
  const { secret, hash } = newSecret('sbt');
  const token = await insertApiToken(deps.db, {
    id: newId('tk'),
    humanId: human.id,
    kind: 'human',
    name: data.token_name ?? 'cli',
    tokenHash: hash,
    expiresAt: null,
  });
  return { token: secret, token_id: token.id, human };
}

export async function logout(deps: IdentityDeps, principal: Principal): Promise<{ revoked: boolean }> {
  if (!principal.token) return { revoked: false };
  await revokeToken(deps, principal, principal.token.id);
  return { revoked: true };
}
