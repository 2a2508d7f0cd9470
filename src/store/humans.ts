// Humans: the people who sign in and own endpoints. Passwords are scrypt hashes. A human
// is active or disabled (docs/design/people.md); every sign-in path reads only active ones.

import type { Queryable } from '../db/pool.js';
import { translatePgError } from './pg-errors.js';

export type Role = 'admin' | 'member';
export type HumanState = 'active' | 'disabled';

export interface Human {
  id: string;
  email: string;
  display_name: string;
  role: Role;
  state: HumanState;
  created_at: Date;
}

const COLUMNS = 'id, email, display_name, role, state, created_at';

export async function insertHuman(
  db: Queryable,
  a: { id: string; email: string; displayName: string; role: Role; passwordHash?: string | null },
): Promise<Human> {
  try {
    const res = await db.query<Human>(
      `INSERT INTO humans (id, email, display_name, role, password_hash) VALUES ($1, $2, $3, $4, $5)
       RETURNING ${COLUMNS}`,
      [a.id, a.email, a.displayName, a.role, a.passwordHash ?? null],
    );
    return res.rows[0] as Human;
  } catch (err) {
    throw translatePgError(err, `a human with email ${a.email} already exists`, 'email');
  }
}

export async function countHumans(db: Queryable): Promise<number> {
  const res = await db.query<{ n: number }>('SELECT count(*) AS n FROM humans');
  return res.rows[0]?.n ?? 0;
}

export async function getHuman(db: Queryable, id: string): Promise<Human | null> {
  const res = await db.query<Human>(`SELECT ${COLUMNS} FROM humans WHERE id = $1`, [id]);
  return res.rows[0] ?? null;
}

export async function listHumans(db: Queryable): Promise<Human[]> {
  const res = await db.query<Human>(`SELECT ${COLUMNS} FROM humans ORDER BY created_at, id`);
  return res.rows;
}

/** For sign-in and password checks only: the reads that return the password hash. */
export async function getHumanForSignIn(
  db: Queryable,
  email: string,
): Promise<(Human & { password_hash: string | null }) | null> {
  const res = await db.query<Human & { password_hash: string | null }>(
    `SELECT ${COLUMNS}, password_hash FROM humans WHERE lower(email) = lower($1)`,
    [email],
  );
  return res.rows[0] ?? null;
}

export async function getHumanWithPassword(
  db: Queryable,
  id: string,
): Promise<(Human & { password_hash: string | null }) | null> {
  const res = await db.query<Human & { password_hash: string | null }>(
    `SELECT ${COLUMNS}, password_hash FROM humans WHERE id = $1`,
    [id],
  );
  return res.rows[0] ?? null;
}

export async function setPassword(db: Queryable, humanId: string, passwordHash: string): Promise<void> {
  await db.query('UPDATE humans SET password_hash = $2 WHERE id = $1', [humanId, passwordHash]);
}

/** Inserts the human unless that id exists; returns the stored row either way. */
export async function ensureHuman(
  db: Queryable,
  a: { id: string; email: string; displayName: string; role: Role },
): Promise<Human> {
  await db.query(`INSERT INTO humans (id, email, display_name, role) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [
    a.id,
    a.email,
    a.displayName,
    a.role,
  ]);
  return (await getHuman(db, a.id)) as Human;
}

/**
 * Locks the human `id` and every active admin, in id order (so two changes lock alike and
 * never deadlock), and returns them. The last-admin check counts the admins in this set:
 * a concurrent change that disabled or demoted one of them has committed before the lock
 * is granted, and the row it changed no longer matches, so two admins disabling each
 * other cannot both see the other one active (docs/design/people.md, "The last admin").
 */
export async function lockHumanAndAdmins(db: Queryable, ids: string[]): Promise<Human[]> {
  const res = await db.query<Human>(
    `SELECT ${COLUMNS} FROM humans WHERE id = ANY($1::text[]) OR (role = 'admin' AND state = 'active')
      ORDER BY id FOR UPDATE`,
    [ids],
  );
  return res.rows;
}

export async function updateHuman(
  db: Queryable,
  id: string,
  a: { state: HumanState; role: Role },
): Promise<Human | null> {
  const res = await db.query<Human>(`UPDATE humans SET state = $2, role = $3 WHERE id = $1 RETURNING ${COLUMNS}`, [
    id,
    a.state,
    a.role,
  ]);
  return res.rows[0] ?? null;
}

/** Deletes the human; their tokens, board sessions and links go with them (ON DELETE CASCADE). */
export async function deleteHumanRow(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query('DELETE FROM humans WHERE id = $1', [id]);
  return res.rowCount === 1;
}
