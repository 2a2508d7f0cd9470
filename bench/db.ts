// Where benchmarks run: SWITCHBOARD_BENCH_DATABASE_URL or SWITCHBOARD_TEST_DATABASE_URL
// (a superuser URL; a fresh database is created and dropped), else a throwaway embedded
// PostgreSQL. Every figure of one run comes from the same server.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbedded } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import type { Pool } from '../src/db/pool.js';
import { newId } from '../src/domain/ids.js';
import { vendEndpoint } from '../src/endpoints/manage.js';
import { nextSql } from '../src/store/claims.js';
import { insertHuman } from '../src/store/humans.js';

export interface BenchDatabase {
  url: string;
  server: string;
  /** Another fresh, migrated database on the same server, dropped with this one. */
  sibling(): Promise<string>;
  close(): Promise<void>;
}

export async function benchDatabase(): Promise<BenchDatabase> {
  let admin = process.env.SWITCHBOARD_BENCH_DATABASE_URL ?? process.env.SWITCHBOARD_TEST_DATABASE_URL;
  let stopEmbedded = async () => undefined;
  let server = admin ? `external PostgreSQL ${new URL(admin).host}` : '';
  if (!admin) {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-bench-pg-'));
    const embedded = await startEmbedded({ dataDir: dir, settings: { max_connections: '200' } });
    admin = embedded.url.replace(/\/switchboard$/, '/postgres');
    server = `embedded PostgreSQL 127.0.0.1:${embedded.port}`;
    stopEmbedded = async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const adminClient = new pg.Client({ connectionString: admin });
  await adminClient.connect();
  const version = await adminClient.query<{ server_version: string }>('SHOW server_version');
  server += ` ${version.rows[0]?.server_version ?? ''}`;
  const names: string[] = [];
  const create = async () => {
    const name = `sb_bench_${randomBytes(4).toString('hex')}`;
    await adminClient.query(`CREATE DATABASE ${name}`);
    names.push(name);
    const u = new URL(admin);
    u.pathname = `/${name}`;
    await migrate(u.toString());
    return u.toString();
  };
  return {
    url: await create(),
    server,
    sibling: create,
    async close() {
      for (const name of names) await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await adminClient.end();
      await stopEmbedded();
    },
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** A human of its own and an endpoint vended for it (basic verbs, queue inbox). */
export async function vendBenchEndpoint(
  pool: Pool,
): Promise<{ humanId: string; endpointId: string; credential: string }> {
  const human = await insertHuman(pool, {
    id: newId('hu'),
    email: `bench-${newId('hu')}@example.test`,
    displayName: 'bench',
    role: 'member',
  });
  const vended = await vendEndpoint(
    { db: pool, publicUrl: 'http://bench.test' },
    human.id,
    { name: 'bench' },
    new Date(),
  );
  return { humanId: human.id, endpointId: vended.endpoint.id, credential: vended.credential };
}

/** Shared buffers (hit + read) the claim statement touches once, from EXPLAIN (ANALYZE, BUFFERS), rolled back. */
export async function claimStatementBuffers(pool: Pool, endpointId: string, print: boolean): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const res = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${nextSql('t.queue = ($2::text[])[1]')}`,
      [endpointId, ['inbox'], 'bench-explain', 300, 25],
    );
    const plan = res.rows.map((r) => r['QUERY PLAN']);
    if (print) process.stdout.write(`${plan.map((l) => `    ${l}`).join('\n')}\n`);
    // The top node's Buffers line counts everything below it.
    const line = plan.find((l) => /Buffers: shared/.test(l)) ?? '';
    const hit = Number(/hit=(\d+)/.exec(line)?.[1] ?? 0);
    const read = Number(/read=(\d+)/.exec(line)?.[1] ?? 0);
    return hit + read;
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}
