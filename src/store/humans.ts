// Humans: the people who own endpoints. Sign-in and credentials arrive with the
// identity work; this is the row the rest of the schema points at.

import type { Queryable } from '../db/pool.js';
import { translatePgError } from './pg-errors.js';

export type Role = 'admin' | 'member';

export interface Human {
  id: string;
  email: string;
  display_name: string;
  role: Role;
  created_at: Date;
}

export async function insertHuman(
  db: Queryable,
  a: { id: string; email: string; displayName: string; role: Role },
): Promise<Human> {
  try {
    const res = await db.query<Human>(
      `INSERT INTO humans (id, email, display_name, role) VALUES ($1, $2, $3, $4)
       RETURNING id, email, display_name, role, created_at`,
      [a.id, a.email, a.displayName, a.role],
    );
    return res.rows[0] as Human;
  } catch (err) {
    throw translatePgError(err, `a human with email ${a.email} already exists`);
  }
}
