// The humans' link to the organisation's OIDC provider (migration 0029,
// docs/design/oauth.md, "Human sign-in through OIDC"): a human is found by (issuer,
// subject) through its unique index, else by e-mail, and linked or created in the
// sign-in's transaction.

import type { Queryable } from '../db/pool.js';
import type { Human, Role } from './humans.js';
import { translatePgError } from './pg-errors.js';

const COLUMNS = 'id, email, display_name, role, state, created_at';

/** A human with their provider link, if any. */
export type LinkedHuman = Human & { oidc_issuer: string | null; oidc_subject: string | null };

/** The human linked to this provider account, whatever their state; one index probe. */
export async function findHumanByOidc(db: Queryable, issuer: string, subject: string): Promise<LinkedHuman | null> {
  const res = await db.query<LinkedHuman>(
    `SELECT ${COLUMNS}, oidc_issuer, oidc_subject FROM humans WHERE oidc_issuer = $1 AND oidc_subject = $2`,
    [issuer, subject],
  );
  return res.rows[0] ?? null;
}

/** The human with this e-mail (case-insensitive, through humans_email_key), locked for the link. */
export async function lockHumanByEmail(db: Queryable, email: string): Promise<LinkedHuman | null> {
  const res = await db.query<LinkedHuman>(
    `SELECT ${COLUMNS}, oidc_issuer, oidc_subject FROM humans WHERE lower(email) = lower($1) FOR UPDATE`,
    [email],
  );
  return res.rows[0] ?? null;
}

/**
 * Links a human not linked to this issuer yet (unlinked, or linked to an issuer no longer
 * configured); false when they are linked to this one already.
 */
export async function linkHumanToOidc(
  db: Queryable,
  humanId: string,
  issuer: string,
  subject: string,
): Promise<boolean> {
  const res = await db.query(
    `UPDATE humans SET oidc_issuer = $2, oidc_subject = $3
      WHERE id = $1 AND (oidc_issuer IS NULL OR oidc_issuer <> $2)`,
    [humanId, issuer, subject],
  );
  return res.rowCount === 1;
}

/** A new human linked to the provider account, without a password. */
export async function insertOidcHuman(
  db: Queryable,
  a: { id: string; email: string; displayName: string; role: Role; issuer: string; subject: string },
): Promise<Human> {
  try {
    const res = await db.query<Human>(
      `INSERT INTO humans (id, email, display_name, role, oidc_issuer, oidc_subject) VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING ${COLUMNS}`,
      [a.id, a.email, a.displayName, a.role, a.issuer, a.subject],
    );
    return res.rows[0] as Human;
  } catch (err) {
    throw translatePgError(err, `a human with email ${a.email} already exists`, 'email');
  }
}

/** The provider link a human had, removed; null when they had none (or no such human). */
export async function unlinkHumanOidc(
  db: Queryable,
  humanId: string,
): Promise<{ issuer: string; subject: string } | null> {
  const res = await db.query<{ issuer: string; subject: string }>(
    `UPDATE humans h SET oidc_issuer = NULL, oidc_subject = NULL
       FROM (SELECT id, oidc_issuer, oidc_subject FROM humans WHERE id = $1 AND oidc_issuer IS NOT NULL FOR UPDATE) old
      WHERE h.id = old.id
     RETURNING old.oidc_issuer AS issuer, old.oidc_subject AS subject`,
    [humanId],
  );
  return res.rows[0] ?? null;
}
