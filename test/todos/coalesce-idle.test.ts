// Group commit never waits for company (docs/design/coalescing.md, "The lane"): on an
// idle instance each call runs alone, as one statement, exactly as with coalescing off.
// Proved from PostgreSQL's own count (pg_stat_statements, on an embedded server started
// here with it preloaded): the same sequential calls run once with coalescing off
// (SWITCHBOARD_COALESCE_MAX_BATCH=1) and once on (the default), each instance on a
// database of its own, and the statements each database ran, with their call counts, are
// the same — and each verb's statement ran once per call.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startEmbedded, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { claimNext, complete, createTodo, fail, heartbeat, release } from '../../src/todos/index.js';
import { agentOf, makeEndpoint } from '../helpers/fixtures.js';
import { testServices } from '../helpers/services.js';

const ROUNDS = 5;

let server: EmbeddedPostgres | null = null;
let scratch = '';
const pools: Pool[] = [];

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'sb-idle-'));
  server = await startEmbedded({
    dataDir: scratch,
    settings: { shared_preload_libraries: 'pg_stat_statements', fsync: 'off', 'pg_stat_statements.max': '5000' },
  });
});

after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A migrated database of its own on the embedded server; returns its pool and oid. */
async function database(name: string): Promise<{ pool: Pool; oid: number }> {
  const admin = new pg.Client({ connectionString: server!.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const oid = await admin.query<{ oid: number }>('SELECT oid::int AS oid FROM pg_database WHERE datname = $1', [
      name,
    ]);
    const url = server!.url.replace(/\/switchboard$/, `/${name}`);
    await migrate(url);
    const pool = createPool({ url, max: 4 });
    pools.push(pool);
    return { pool, oid: oid.rows[0]!.oid };
  } finally {
    await admin.end();
  }
}

async function resetCounts(): Promise<void> {
  const c = new pg.Client({ connectionString: server!.url });
  await c.connect();
  try {
    await c.query('SELECT pg_stat_statements_reset()');
  } finally {
    await c.end();
  }
}

/** Statement text → calls, as pg_stat_statements counted them for one database. */
async function counted(oid: number): Promise<Map<string, number>> {
  const c = new pg.Client({ connectionString: server!.url });
  await c.connect();
  try {
    const res = await c.query<{ query: string; calls: string }>(
      'SELECT query, calls FROM pg_stat_statements WHERE dbid = $1 AND toplevel',
      [oid],
    );
    return new Map(res.rows.map((r) => [r.query, Number(r.calls)]));
  } finally {
    await c.end();
  }
}

/**
 * ROUNDS of create → claim → heartbeat → complete, create → claim → fail, create → claim
 * → release, one call at a time (a released todo is the next claim's, as it is ready first).
 */
async function sequentialCalls(pool: Pool, maxBatch: string): Promise<void> {
  const services = await testServices({ pool, env: { SWITCHBOARD_COALESCE_MAX_BATCH: maxBatch } });
  assert.equal(
    services.todos.coalesce === null,
    maxBatch === '1',
    'coalescing is on exactly when the batch may exceed 1',
  );
  const endpoint = await makeEndpoint(pool, { queues: ['inbox'] });
  const agent = agentOf(endpoint, 'session-idle');
  const push = async (title: string) =>
    (
      await createTodo(
        services.todos,
        { endpointId: endpoint.id },
        { humanId: endpoint.human_id },
        { queue: 'inbox', title },
      )
    ).todo;
  const take = async () => {
    const claimed = await claimNext(services.todos, agent, {});
    assert.ok('todo' in claimed, 'the claim found the todo');
    return claimed.todo.id;
  };
  for (let i = 0; i < ROUNDS; i++) {
    await push(`done ${i}`);
    const a = await take();
    await heartbeat(services.todos, agent, { id: a, lease_seconds: 600 });
    await complete(services.todos, agent, { id: a, result: { i } });
    await push(`failed ${i}`);
    await fail(services.todos, agent, { id: await take(), error: 'no', retry: false });
    await push(`released ${i}`);
    await release(services.todos, agent, { id: await take() });
  }
}

test('an idle instance runs each call as one statement, exactly as with coalescing off', async () => {
  const off = await database('idle_off');
  const on = await database('idle_on');
  await resetCounts();
  await sequentialCalls(off.pool, '1');
  await sequentialCalls(on.pool, '32');
  const [alone, coalesced] = await Promise.all([counted(off.oid), counted(on.oid)]);

  // Each verb's own statement ran once per call (pg_stat_statements shows the texts with
  // their constants as parameters).
  const calls = (pattern: RegExp) =>
    [...coalesced].filter(([q]) => pattern.test(q.replace(/\s+/g, ' '))).reduce((n, [, c]) => n + c, 0);
  assert.equal(calls(/^WITH live AS/), 3 * ROUNDS, 'one insert statement per create');
  assert.equal(calls(/^WITH pol AS \(SELECT to_jsonb\(p\)/), 3 * ROUNDS, 'one claim statement per claim');
  assert.equal(calls(/^WITH r AS \( UPDATE todos t SET lease_expires_at = now\(\)/), ROUNDS, 'one per heartbeat');
  assert.equal(calls(/completed_at = now\(\)/), ROUNDS, 'one statement per complete');
  assert.equal(calls(/SET state = \$\d+, error = \$/), ROUNDS, 'one statement per fail');
  assert.equal(calls(/SET state = \$\d+, owner_session_id = \$\d+, lease_expires_at/), ROUNDS, 'one per release');

  // And nothing else differs: no statement ran that coalescing off did not run, none more often.
  const differences: string[] = [];
  for (const q of new Set([...alone.keys(), ...coalesced.keys()])) {
    if (alone.get(q) !== coalesced.get(q)) {
      differences.push(`${alone.get(q) ?? 0} → ${coalesced.get(q) ?? 0}: ${q.replace(/\s+/g, ' ').slice(0, 120)}`);
    }
  }
  assert.deepEqual(differences, [], 'statements whose call count differs with coalescing on');
});
