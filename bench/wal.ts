// Where a claim → complete cycle's WAL goes: by relation and record type, read with
// pg_walinspect over SQL (so it works on the embedded server and on any server the bench
// URL's superuser can reach, with no access to its pg_wal directory).
//
// Three drains of BENCH_TODOS todos by 16 workers, each after a CHECKPOINT so each starts
// alike: the floor (bench/claim.ts's two bare statements, no history), Switchboard
// uncoalesced (SWITCHBOARD_COALESCE_MAX_BATCH=1) and coalesced (the setting, default 32).
// Each prints WAL bytes per job, split into full-page images and the rest: full-page
// images are written on a page's first change after a checkpoint, so their share per job
// depends on how many jobs a checkpoint interval holds (here: one run); the rest is what
// every job costs whatever the checkpoint spacing. Then the coalesced drain's largest
// relation × record type rows. The ratios are against the floor of the same run.

import { createPool, type Pool } from '../src/db/pool.js';
import { floorRound, freshEndpoint, switchboardRound, WORKERS } from './claim.js';
import { benchDatabase } from './db.js';

const TODOS = Number(process.env.BENCH_TODOS ?? 20_000);
const TOP = Number(process.env.BENCH_WAL_TOP ?? 16);
const COALESCED = Number(process.env.SWITCHBOARD_COALESCE_MAX_BATCH ?? 32);

interface WalRow {
  rel: string;
  kind: string;
  n: number;
  bytes: number;
  fpi: number;
}

const lsn = async (pool: Pool) =>
  (await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn as string;

// A record's relation is its first block reference's relfilenode, named when it is one of
// this database's relations; records with no block (commits) are '-'.
const BY_RELATION = `
  SELECT coalesce(c.relname, CASE WHEN w.block_ref IS NULL THEN '-' ELSE 'other' END) AS rel,
         w.resource_manager || '/' || w.record_type AS kind,
         count(*)::float8 AS n, sum(w.record_length)::float8 AS bytes, sum(w.fpi_length)::float8 AS fpi
    FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) w
    LEFT JOIN pg_class c
      ON c.relfilenode = substring(w.block_ref FROM 'rel \\d+/\\d+/(\\d+)')::oid
     AND substring(w.block_ref FROM 'rel \\d+/(\\d+)/')::oid = (SELECT oid FROM pg_database WHERE datname = current_database())
   GROUP BY 1, 2
   ORDER BY 4 DESC`;

async function measured(pool: Pool, drain: (endpointId: string) => Promise<number>) {
  const endpointId = await freshEndpoint(pool, TODOS);
  await pool.query('CHECKPOINT');
  const start = await lsn(pool);
  const rate = await drain(endpointId);
  const rows = (await pool.query<WalRow>(BY_RELATION, [start, await lsn(pool)])).rows;
  const sum = (pick: (r: WalRow) => number) => rows.reduce((a, r) => a + pick(r), 0) / TODOS;
  return { rate, rows, total: sum((r) => r.bytes), fpi: sum((r) => r.fpi) };
}

export async function runWalBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: WORKERS });
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    process.stdout.write(`wal bench: ${WORKERS} workers, ${TODOS} todos a drain, on ${db.server}\n`);
    // Warm-up, not measured: connections, prepared statements.
    await switchboardRound(pool, await freshEndpoint(pool, 2_000), 2_000);
    const floor = await measured(pool, (e) => floorRound(pool, e, TODOS));
    const single = await measured(pool, (e) => switchboardRound(pool, e, TODOS, 1));
    const batched = await measured(pool, (e) => switchboardRound(pool, e, TODOS, COALESCED));
    const line = (name: string, m: typeof floor) =>
      `${name.padEnd(28)} ${m.total.toFixed(0).padStart(6)} B/job (full-page images ${m.fpi.toFixed(0).padStart(5)}, ` +
      `rest ${(m.total - m.fpi).toFixed(0).padStart(5)}, ÷ floor ${((m.total - m.fpi) / (floor.total - floor.fpi)).toFixed(2)}) ` +
      `${m.rate.toFixed(0)} jobs/s\n`;
    process.stdout.write(
      line('floor (2 bare statements)', floor) +
        line('switchboard, max batch 1', single) +
        line(`switchboard, max batch ${COALESCED}`, batched) +
        `largest of the coalesced drain (B/job, of it full-page images, records/job):\n`,
    );
    for (const r of batched.rows.slice(0, TOP)) {
      process.stdout.write(
        `  ${(r.bytes / TODOS).toFixed(0).padStart(5)} ${(r.fpi / TODOS).toFixed(0).padStart(5)} ` +
          `${(r.n / TODOS).toFixed(2).padStart(5)}  ${r.kind.padEnd(22)} ${r.rel}\n`,
      );
    }
  } finally {
    await pool.end();
    await db.close();
  }
}
