// Each test file gets its own database, cloned from a template migrated once per set of
// migrations, and dropped at the end (kept, and named on stderr, when a test failed).

import { createHash, randomBytes } from 'node:crypto';
import { after } from 'node:test';
import pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';

export function adminUrl(): string {
  const url = process.env.SWITCHBOARD_TEST_DATABASE_URL;
  if (!url) throw new Error('SWITCHBOARD_TEST_DATABASE_URL is not set: run the tests with `npm test`');
  return url;
}

export function urlFor(database: string): string {
  const u = new URL(adminUrl());
  u.pathname = `/${database}`;
  return u.toString();
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function ensureTemplate(): Promise<string> {
  const migrations = await loadMigrations();
  const digest = createHash('sha256');
  for (const m of migrations) digest.update(m.checksum);
  const name = `sb_tpl_${digest.digest('hex').slice(0, 16)}`;
  await withAdmin(async (c) => {
    await c.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      const found = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount === 0) {
        await c.query(`CREATE DATABASE ${name}`);
        await migrate(urlFor(name), migrations);
      }
    } finally {
      await c.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
  return name;
}

/** Creates an empty (unmigrated) database; dropped when the file's tests end. */
export async function emptyDatabase(label: string): Promise<string> {
  const name = `sb_t_${label.replace(/[^a-z0-9]/g, '_').slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  registerDrop(name);
  return urlFor(name);
}

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
}

/** A migrated database of this file's own, with a pool that is closed at the end. */
export async function testDatabase(label: string, poolSize = 10): Promise<TestDatabase> {
  const template = await ensureTemplate();
  const name = `sb_t_${label.replace(/[^a-z0-9]/g, '_').slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  await withAdmin(async (c) => {
    // Cloning fails while another session is connected to the template; that window
    // is only the template's own migration, so a few retries cover it.
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        return;
      } catch (err) {
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  });
  const pool = createPool({ url: urlFor(name), max: poolSize });
  after(async () => {
    await pool.end();
  });
  registerDrop(name);
  return { name, url: urlFor(name), pool };
}

const drops: string[] = [];

/**
 * Drops the file's databases once everything else has ended. `after` hooks run in the
 * order they were registered, so a drop registered there would run before the stop of a
 * server started later in the file, pulling the database from under its background work;
 * `beforeExit` comes only when the file's tests and hooks are all done.
 */
function registerDrop(name: string): void {
  drops.push(name);
  if (drops.length > 1) return;
  process.once('beforeExit', () => {
    void (async () => {
      for (const db of drops) {
        if (process.exitCode) {
          process.stderr.write(`kept database ${db} (a test failed)\n`);
          continue;
        }
        await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`));
      }
    })();
  });
}
