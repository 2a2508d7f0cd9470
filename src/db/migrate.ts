// The migration runner: migrations/NNNN_name.sql applied in order, each in its own
// transaction, recorded with a SHA-256 checksum in schema_migrations. A session-level
// advisory lock serialises instances starting at once: one applies, the rest wait and
// then find the schema current. It refuses to run when the database knows a migration
// this code does not (a newer version migrated it) or when an applied file was edited.
// Forward-only: there is no down.

import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Hosts, connectClient } from './connect.js';
import type { Queryable } from './pool.js';
import { checkServerVersion } from './server-version.js';

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the database';
  }
}

// The package's migrations/: two folders up from src/db/ and from the compiled dist/db/ alike.
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

// Arbitrary but fixed: the same key in every instance and version of Switchboard.
const LOCK_KEY = 7_461_230_915;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(`${dir}/${file}`, 'utf8');
      return {
        version: Number(file.slice(0, 4)),
        name: file.replace(/\.sql$/, ''),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    }),
  );
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

async function appliedMigrations(db: Queryable): Promise<AppliedRow[] | null> {
  const exists = await db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!exists.rows[0]?.t) return null;
  const res = await db.query<AppliedRow>('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
  return res.rows;
}

/** Throws MigrationError when the database and this code disagree about applied files. */
function checkApplied(applied: AppliedRow[], known: Migration[]): void {
  const byVersion = new Map(known.map((m) => [m.version, m]));
  for (const row of applied) {
    const mine = byVersion.get(row.version);
    if (!mine) {
      throw new MigrationError(
        `the database has migration ${row.name}, which this version of Switchboard does not know: ` +
          `it was migrated by a newer version. Run that version (or newer) against this database.`,
      );
    }
    if (mine.checksum !== row.checksum) {
      throw new MigrationError(
        `migration ${row.name} differs from the one applied to this database (checksum mismatch): ` +
          `applied migrations must never be edited.`,
      );
    }
  }
}

export interface MigrateResult {
  applied: string[];
  current: string | null;
}

/** Brings the database to the latest schema. Safe to call from many processes at once. */
export async function migrate(
  url: string,
  migrations?: Migration[],
  options: { connectTimeoutMs?: number } = {},
): Promise<MigrateResult> {
  const known = migrations ?? (await loadMigrations());
  // A multi-host URL lands on the writable primary (./connect.ts). The advisory lock and
  // the SETs below are session-level: behind a transaction pooler each statement may run
  // on another server connection, so `serve` migrates over the bus's direct URL.
  // A connection lost mid-run (pg_terminate_backend, a restart) fails the pending query,
  // which rejects migrate(); connectClient leaves a listener on 'error' so it cannot kill the process.
  const client = await connectClient(Hosts.forWriting(url, options.connectTimeoutMs), {
    application_name: 'switchboard-migrate',
  });
  try {
    // Before anything is written: a server older than 15 is refused, naming its version.
    await checkServerVersion(client, `PostgreSQL at ${hostOf(url)}`);
    // A migration may rewrite a large table: no statement_timeout a role or database
    // default (or an operator's PGOPTIONS) sets may cancel it halfway. Nor a lock_timeout:
    // its ALTERs wait for the running instances' transactions, and the other starting
    // instances wait on the advisory lock below for as long as the migration takes.
    await client.query('SET statement_timeout = 0');
    await client.query('SET lock_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1::bigint)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const applied = (await appliedMigrations(client)) ?? [];
    checkApplied(applied, known);
    const done = new Set(applied.map((r) => r.version));
    const newlyApplied: string[] = [];
    for (const m of known.filter((k) => !done.has(k.version))) {
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          m.version,
          m.name,
          m.checksum,
        ]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new MigrationError(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      newlyApplied.push(m.name);
    }
    return { applied: newlyApplied, current: known.at(-1)?.name ?? null };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}

/** `unknown`: the database holds migrations this build does not know, or edited ones. */
export type SchemaStatus = { current: true } | { current: false; reason: string; unknown?: boolean };

/** For /readyz: is every known migration applied, and nothing unknown? */
export async function schemaStatus(db: Queryable, known: Migration[]): Promise<SchemaStatus> {
  const applied = await appliedMigrations(db);
  if (!applied) return { current: false, reason: 'no migrations applied' };
  try {
    checkApplied(applied, known);
  } catch (err) {
    return { current: false, reason: (err as Error).message, unknown: true };
  }
  const missing = known.length - applied.length;
  return missing === 0 ? { current: true } : { current: false, reason: `${missing} migration(s) pending` };
}
