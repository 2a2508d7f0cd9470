// The signing secrets of webhooks and notify hooks as the start of a server sees them
// (docs/design/intake.md, "Secrets at rest"): which keys sealed them, and the rows still
// to be (re)sealed under the current key. Run once per start, not on a request path or
// in a sweep: each reads the two tables whole, which their quotas keep small.

import type { Queryable } from '../db/pool.js';

const TABLES = ['webhooks', 'notify_hooks'] as const;
export type SecretTable = (typeof TABLES)[number];

export interface SecretRow {
  table: SecretTable;
  endpoint_id: string;
  id: string;
  secret: string | null;
  prev_secret: string | null;
}

/** The key ids of every sealed value (`enc:v1:<id>:…`). */
export async function sealedKeyIds(db: Queryable): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `SELECT DISTINCT split_part(v, ':', 3) AS id FROM (
       SELECT secret AS v FROM webhooks UNION ALL SELECT prev_secret FROM webhooks
       UNION ALL SELECT secret FROM notify_hooks UNION ALL SELECT prev_secret FROM notify_hooks) s
      WHERE v LIKE 'enc:v1:%'`,
  );
  return res.rows.map((r) => r.id);
}

/** Rows holding a secret not sealed under `prefix` (`enc:v1:<current id>:`). */
export async function rowsToReseal(db: Queryable, prefix: string): Promise<SecretRow[]> {
  const rows: SecretRow[] = [];
  for (const table of TABLES) {
    const res = await db.query<Omit<SecretRow, 'table'>>(
      `SELECT endpoint_id, id, secret, prev_secret FROM ${table}
        WHERE (secret IS NOT NULL AND left(secret, length($1)) <> $1)
           OR (prev_secret IS NOT NULL AND left(prev_secret, length($1)) <> $1)`,
      [prefix],
    );
    rows.push(...res.rows.map((r) => ({ ...r, table })));
  }
  return rows;
}

/** Rewrites one row's secrets if they are still what was read (a rotation meanwhile wins). */
export async function resealRow(
  db: Queryable,
  row: SecretRow,
  sealed: { secret: string | null; prev_secret: string | null },
): Promise<boolean> {
  const table = row.table === 'webhooks' ? 'webhooks' : 'notify_hooks';
  const res = await db.query(
    `UPDATE ${table} SET secret = $5, prev_secret = $6
      WHERE endpoint_id = $1 AND id = $2 AND secret IS NOT DISTINCT FROM $3 AND prev_secret IS NOT DISTINCT FROM $4`,
    [row.endpoint_id, row.id, row.secret, row.prev_secret, sealed.secret, sealed.prev_secret],
  );
  return res.rowCount === 1;
}
