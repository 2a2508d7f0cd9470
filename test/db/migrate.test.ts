// Pins the migration runner: concurrent processes apply each migration once, a database
// ahead of the code or with an edited migration is refused, and the fresh schema matches
// the committed snapshot (SWITCHBOARD_TEST_UPDATE_SNAPSHOT=1 rewrites it).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadMigrations, migrate, MigrationError, schemaStatus } from '../../src/db/migrate.js';
import { createPool, type Queryable } from '../../src/db/pool.js';
import { emptyDatabase } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RACER = fileURLToPath(new URL('./fixtures/migrate-once.ts', import.meta.url));
const SNAPSHOT = fileURLToPath(new URL('./schema.snapshot.txt', import.meta.url));

interface RacerResult {
  ok: boolean;
  applied?: string[];
  current?: string | null;
  message?: string;
}

/** Starts N migrate processes, waits until each has loaded, then releases them together. */
async function raceMigrations(url: string, count: number): Promise<RacerResult[]> {
  const racers = Array.from({ length: count }, () =>
    spawn(process.execPath, ['--import', 'tsx', RACER, url], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  try {
    const outputs = racers.map((child) => {
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', () => out.includes('ready\n') && resolve());
        child.once('exit', (code) => reject(new Error(`racer exited (${code}) before ready: ${err}`)));
      });
      const done = new Promise<RacerResult>((resolve, reject) => {
        child.once('exit', () => {
          const line = out.trim().split('\n').at(-1) ?? '';
          try {
            resolve(JSON.parse(line) as RacerResult);
          } catch {
            reject(new Error(`racer printed no result; stdout: ${out} stderr: ${err}`));
          }
        });
      });
      return { ready, done };
    });
    await withTimeout(Promise.all(outputs.map((o) => o.ready)), 60_000, 'racers loading');
    for (const child of racers) child.stdin.end('go\n');
    return await withTimeout(Promise.all(outputs.map((o) => o.done)), 60_000, 'racers migrating');
  } finally {
    for (const child of racers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function withPool<T>(url: string, fn: (db: Queryable) => Promise<T>): Promise<T> {
  const pool = createPool({ url, max: 2 });
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

test('three processes migrating one empty database at once: one applies every migration, the others none', async () => {
  const url = await emptyDatabase('migrate_race');
  const migrations = await loadMigrations();
  const names = migrations.map((m) => m.name);
  const results = await raceMigrations(url, 3);
  assert.ok(
    results.every((r) => r.ok),
    `every racer succeeds: ${JSON.stringify(results)}`,
  );
  const appliers = results.filter((r) => (r.applied ?? []).length > 0);
  assert.equal(appliers.length, 1, `exactly one applier: ${JSON.stringify(results)}`);
  assert.deepEqual(appliers[0]?.applied, names);
  assert.equal(results.filter((r) => r.applied?.length === 0).length, 2);
  assert.ok(results.every((r) => r.current === names.at(-1)));
  await withPool(url, async (db) => {
    assert.deepEqual(await schemaStatus(db, migrations), { current: true });
    const rows = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(
      rows.rows.map((r) => r.version),
      migrations.map((m) => m.version),
    );
  });
});

test('a database migrated by a newer version (an unknown 9999_future applied) is refused with a MigrationError', async () => {
  const url = await emptyDatabase('migrate_future');
  await migrate(url);
  await withPool(url, (db) =>
    db.query(`INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, '9999_future', 'from-the-future')`),
  );
  for (let run = 0; run < 2; run++) {
    // Twice: the refusal must release the advisory lock, or the second run would hang.
    await assert.rejects(withTimeout(migrate(url), 30_000, 'migrate against a newer database'), (err: unknown) => {
      assert.ok(err instanceof MigrationError, `a MigrationError, got ${String(err)}`);
      assert.match(err.message, /9999_future/);
      assert.match(err.message, /migrated by a newer version/);
      return true;
    });
  }
  await withPool(url, async (db) => {
    const status = await schemaStatus(db, await loadMigrations());
    assert.equal(status.current, false);
    assert.match(!status.current ? status.reason : '', /newer version/);
    const locks = await db.query(
      `SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE l.locktype = 'advisory' AND d.datname = current_database()`,
    );
    assert.equal(locks.rowCount, 0, 'no advisory lock is left held');
  });
});

test('an applied migration whose recorded checksum differs is refused, naming the migration', async () => {
  const url = await emptyDatabase('migrate_tamper');
  const migrations = await loadMigrations();
  const first = migrations[0];
  assert.ok(first, 'there is at least one migration');
  await migrate(url, migrations);
  await withPool(url, (db) =>
    db.query(`UPDATE schema_migrations SET checksum = 'tampered' WHERE version = $1::int`, [first.version]),
  );
  await assert.rejects(migrate(url, migrations), (err: unknown) => {
    assert.ok(err instanceof MigrationError, `a MigrationError, got ${String(err)}`);
    assert.ok(err.message.includes(first.name), `names ${first.name}: ${err.message}`);
    assert.match(err.message, /checksum/);
    return true;
  });
  await withPool(url, async (db) => {
    const status = await schemaStatus(db, migrations);
    assert.equal(status.current, false);
    assert.ok(!status.current && status.reason.includes(first.name));
  });
});

test('schemaStatus reports an unmigrated database, a pending migration, and then a current schema', async () => {
  const url = await emptyDatabase('migrate_status');
  const migrations = await loadMigrations();
  await withPool(url, async (db) => {
    assert.deepEqual(await schemaStatus(db, migrations), { current: false, reason: 'no migrations applied' });
    await migrate(url, migrations);
    assert.deepEqual(await schemaStatus(db, migrations), { current: true });
    const next = { version: 9998, name: '9998_next', sql: 'SELECT 1', checksum: 'next' };
    assert.deepEqual(await schemaStatus(db, [...migrations, next]), {
      current: false,
      reason: '1 migration(s) pending',
    });
  });
  assert.deepEqual((await migrate(url, migrations)).applied, [], 'a second migrate applies nothing');
});

// Columns in table order; constraints and indexes by name; everything in schema public.
// NOT NULL constraints (catalogued since PostgreSQL 18) are left to the column lines so
// the snapshot reads the same on every supported server.
const SCHEMA_QUERIES = {
  columns: `SELECT c.relname AS tbl, a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                   || CASE WHEN a.attnotnull THEN ' not null' ELSE ' null' END
                   || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                   || CASE WHEN a.attidentity::text <> '' THEN ' identity ' || a.attidentity::text ELSE '' END
                   || CASE WHEN a.attgenerated::text <> '' THEN ' generated' ELSE '' END AS line
              FROM pg_attribute a
              JOIN pg_class c ON c.oid = a.attrelid
              JOIN pg_namespace n ON n.oid = c.relnamespace
              LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
             WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
             ORDER BY c.relname, a.attnum`,
  constraints: `SELECT c.relname AS tbl, 'constraint ' || k.conname || ' ' || pg_get_constraintdef(k.oid) AS line
                  FROM pg_constraint k
                  JOIN pg_class c ON c.oid = k.conrelid
                  JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = 'public' AND k.contype <> 'n'
                 ORDER BY c.relname, k.conname`,
  indexes: `SELECT tablename AS tbl, 'index ' || indexdef AS line
              FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`,
  triggers: `SELECT c.relname AS tbl, 'trigger ' || pg_get_triggerdef(t.oid) AS line
               FROM pg_trigger t
               JOIN pg_class c ON c.oid = t.tgrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'public' AND NOT t.tgisinternal
              ORDER BY c.relname, t.tgname`,
  others: `SELECT '' AS tbl, line FROM (
             SELECT 'sequence ' || c.relname AS line FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'public' AND c.relkind = 'S'
             UNION ALL
             SELECT 'view ' || c.relname || ' AS ' || pg_get_viewdef(c.oid) FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('v', 'm')
             UNION ALL
             SELECT 'function ' || pg_get_functiondef(p.oid) FROM pg_proc p
               JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
             UNION ALL
             SELECT 'type ' || t.typname || ' enum (' || string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) || ')'
               FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
               JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public' GROUP BY t.typname
             UNION ALL
             SELECT 'extension ' || extname FROM pg_extension WHERE extname <> 'plpgsql') o
           ORDER BY line`,
};

/** The schema as text: one block per table, then any other objects, each sorted. */
async function dumpSchema(db: Queryable): Promise<string> {
  const tables = new Map<string, string[]>();
  const others: string[] = [];
  for (const sql of Object.values(SCHEMA_QUERIES)) {
    const rows = await db.query<{ tbl: string; line: string }>(sql);
    for (const { tbl, line } of rows.rows) {
      if (tbl === '') others.push(line);
      else tables.set(tbl, [...(tables.get(tbl) ?? []), line]);
    }
  }
  const blocks = [...tables.keys()]
    .sort()
    .map((name) => [`table ${name}`, ...(tables.get(name) ?? []).map((l) => `  ${l}`)].join('\n'));
  return [...blocks, ...others].join('\n\n') + '\n';
}

test('a fresh install matches the committed schema snapshot (test/db/schema.snapshot.txt)', async () => {
  const url = await emptyDatabase('migrate_snapshot');
  await migrate(url);
  const actual = await withPool(url, dumpSchema);
  if (process.env.SWITCHBOARD_TEST_UPDATE_SNAPSHOT === '1') {
    await writeFile(SNAPSHOT, actual);
    return;
  }
  const expected = await readFile(SNAPSHOT, 'utf8').catch(() => '');
  assert.equal(
    actual,
    expected,
    'the schema differs from test/db/schema.snapshot.txt; if the change is intended, rerun with ' +
      'SWITCHBOARD_TEST_UPDATE_SNAPSHOT=1 and commit the snapshot with the migration',
  );
});
