// Endpoints: one logical agent each, owned by one human, with its granted queues and
// verbs. Vending, credentials and revocation arrive with the identity work.

import type { Queryable } from '../db/pool.js';
import { translatePgError } from './pg-errors.js';

export interface Endpoint {
  id: string;
  human_id: string;
  name: string;
  slug: string;
  queues: string[];
  verbs: string[];
  default_lease_seconds: number | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

const COLUMNS = `id, human_id, name, slug, queues, verbs, default_lease_seconds, expires_at, revoked_at, created_at`;

export interface InsertEndpointArgs {
  id: string;
  humanId: string;
  name: string;
  slug: string;
  queues: string[];
  verbs: string[];
  defaultLeaseSeconds: number | null;
  expiresAt: Date | null;
}

export async function insertEndpoint(db: Queryable, a: InsertEndpointArgs): Promise<Endpoint> {
  try {
    const res = await db.query<Endpoint>(
      `INSERT INTO endpoints (id, human_id, name, slug, queues, verbs, default_lease_seconds, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [a.id, a.humanId, a.name, a.slug, a.queues, a.verbs, a.defaultLeaseSeconds, a.expiresAt],
    );
    return res.rows[0] as Endpoint;
  } catch (err) {
    throw translatePgError(err, `an endpoint with slug ${a.slug} already exists`);
  }
}

export async function getEndpoint(db: Queryable, id: string): Promise<Endpoint | null> {
  const res = await db.query<Endpoint>(`SELECT ${COLUMNS} FROM endpoints WHERE id = $1`, [id]);
  return res.rows[0] ?? null;
}
