// The first admin, invites and password resets: one-time links. With no humans, the
// server mints a setup link (valid 1 h) at start; spending it creates the first admin. An
// invite (valid 7 days) lets an invited human set a password; a reset link (valid 1 h,
// issued by an admin, docs/design/people.md) sets a new one and ends every sign-in the
// human had. Each link works once.

import { z } from 'zod';
import { withTx } from '../db/pool.js';
import { AppError } from '../domain/errors.js';
import { maxLength, minLength } from '../domain/issues.js';
import { newId } from '../domain/ids.js';
import { parseInput } from '../domain/todo.js';
import { countHumans, ensureHuman, getHuman, insertHuman, setPassword, type Human } from '../store/humans.js';
import { endSignIns, spendResetLinks } from '../store/human-lifecycle.js';
import { consumeSetupToken, insertSetupToken, lockSetup, setupTokenLive } from '../store/setup-tokens.js';
import type { IdentityDeps, Principal } from './principal.js';
import { hashPassword, hashSecret, newSecret } from './secrets.js';

export const SETUP_TTL_SECONDS = 3600;
export const INVITE_TTL_SECONDS = 7 * 86_400;
/** An hour: enough to read the mail and act; a link that leaks later is already dead. */
export const RESET_TTL_SECONDS = 3600;

export const password = z
  .string()
  .check(minLength(8, 'must be at least 8 characters'), maxLength(200, 'must be at most 200 characters'));
// zod 4's email pattern: zod 3's, rewritten, taking the same addresses as its `.email()`.
export const email = z
  .string()
  .trim()
  .toLowerCase()
  .regex(z.regexes.email, 'must be an email address')
  .check(maxLength(254));

export const setupInput = z.strictObject({
  token: z.string().min(1).check(maxLength(200)),
  email: email.optional(),
  password,
  display_name: z.string().check(maxLength(100)).optional(),
});

/** With no humans yet, mints a setup link and returns its URL; otherwise null. */
export async function ensureSetupLink(deps: IdentityDeps): Promise<string | null> {
  if ((await countHumans(deps.db)) > 0) return null;
  const { secret, hash } = newSecret('sbs');
  await insertSetupToken(deps.db, { tokenHash: hash, purpose: 'setup', humanId: null, ttlSeconds: SETUP_TTL_SECONDS });
  return `${deps.publicUrl}/setup/${secret}`;
}

export function setupLinkLive(deps: IdentityDeps, token: string): Promise<boolean> {
  return setupTokenLive(deps.db, hashSecret(token));
}

/**
 * Spends a setup or invite link: creates the first admin, or sets an invitee's password.
 * One transaction: a refused attempt (missing email, an admin already there) leaves the
 * link unspent for a corrected retry.
 */
export async function completeSetup(deps: IdentityDeps, input: unknown): Promise<Human> {
  const data = parseInput(setupInput, input);
  const passwordHash = await hashPassword(data.password);
  return withTx(deps.db, async (tx) => {
    const spent = await consumeSetupToken(tx, hashSecret(data.token));
    if (!spent)
      throw new AppError('unauthenticated', 'token: this link is unknown, used or expired', { field: 'token' });
    if (spent.purpose !== 'setup' && spent.human_id) {
      await setPassword(tx, spent.human_id, passwordHash);
      if (spent.purpose === 'reset') await endSignIns(tx, spent.human_id, null);
      const human = await getHuman(tx, spent.human_id);
      if (!human) throw new AppError('not_found', 'the invited human no longer exists');
      return human;
    }
    if (!data.email) throw new AppError('invalid_argument', 'email: is required', { field: 'email' });
    await lockSetup(tx);
    if ((await countHumans(tx)) > 0) {
      throw new AppError('conflict', 'setup is done: an admin already exists; ask an admin for an invite');
    }
    return insertHuman(tx, {
      id: newId('hu'),
      email: data.email,
      displayName: data.display_name ?? '',
      role: 'admin',
      passwordHash,
    });
  });
}

/** An invite link for a human created without a password. */
export async function inviteLink(deps: IdentityDeps, humanId: string): Promise<string> {
  const { secret, hash } = newSecret('sbs');
  await insertSetupToken(deps.db, { tokenHash: hash, purpose: 'invite', humanId, ttlSeconds: INVITE_TTL_SECONDS });
  return `${deps.publicUrl}/setup/${secret}`;
}

/** A password-reset link for the human, valid RESET_TTL_SECONDS; earlier unspent ones stop working. */
export async function resetLink(deps: IdentityDeps, humanId: string): Promise<{ reset_url: string; expires_at: Date }> {
  const { secret, hash } = newSecret('sbs');
  const expiresAt = await withTx(deps.db, async (tx) => {
    await spendResetLinks(tx, humanId);
    return insertSetupToken(tx, { tokenHash: hash, purpose: 'reset', humanId, ttlSeconds: RESET_TTL_SECONDS });
  });
  return { reset_url: `${deps.publicUrl}/setup/${secret}`, expires_at: expiresAt };
}

/** The synthetic admin of SWITCHBOARD_AUTH=off: one fixed row, so ownership still holds. */
export async function localAdmin(deps: IdentityDeps): Promise<Principal> {
  const human = await ensureHuman(deps.db, {
    id: 'hu_00000000000000000000000000',
    email: 'admin@localhost',
    displayName: 'Local admin (auth off)',
    role: 'admin',
  });
  return { human, token: null };
}
