// Board sessions: sign in with email and password for an opaque cookie token (hashed at
// rest, 7 days), each with its own CSRF token for state-changing forms; sign out deletes
// it. The cookie's flags are the board's concern.

import { randomBytes } from 'node:crypto';
import { findBoardSession, insertBoardSession, deleteBoardSession } from '../store/board-sessions.js';
import { refusePasswordSignIn, verifyCredentials } from './login.js';
import type { IdentityDeps, Principal } from './principal.js';
import { hashSecret, newSecret } from './secrets.js';

/** A week: long enough not to nag, short enough that a lost laptop's session dies. */
export const BOARD_SESSION_TTL_SECONDS = 7 * 86_400;

export interface BoardSession {
  principal: Principal;
  csrf: string;
  /** When the session ends by itself (a /ws opened with it closes then); null with auth off. */
  expires_at: Date | null;
}

export async function signIn(
  deps: IdentityDeps,
  email: string,
  password: string,
): Promise<{ cookie: string; csrf: string; expires_at: Date }> {
  refusePasswordSignIn(deps);
  const human = await verifyCredentials(deps, email, password);
  return openBoardSession(deps, human.id);
}

/**
 * A new board session for a human whose identity was just proven another way: the
 * one-time setup, invite or reset link they spent, or their own password change that
 * ended every other sign-in.
 */
export async function openBoardSession(
  deps: IdentityDeps,
  humanId: string,
): Promise<{ cookie: string; csrf: string; expires_at: Date }> {
  const { secret, hash } = newSecret('sbx');
  const csrf = randomBytes(24).toString('base64url');
  const expiresAt = await insertBoardSession(deps.db, {
    tokenHash: hash,
    humanId,
    csrfToken: csrf,
    ttlSeconds: BOARD_SESSION_TTL_SECONDS,
  });
  return { cookie: secret, csrf, expires_at: expiresAt };
}

export async function boardSession(deps: IdentityDeps, cookie: string | undefined): Promise<BoardSession | null> {
  if (!cookie?.startsWith('sbx_')) return null;
  const found = await findBoardSession(deps.db, hashSecret(cookie));
  return found
    ? { principal: { human: found.human, token: null }, csrf: found.csrf_token, expires_at: found.expires_at }
    : null;
}

/** Signs out: ends the session, and every instance closes the /ws connections opened with it. */
export async function signOut(deps: IdentityDeps, cookie: string | undefined): Promise<void> {
  if (cookie) await deleteBoardSession(deps.db, hashSecret(cookie));
}
