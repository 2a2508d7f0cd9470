// Disk per finished todo: what one PostgreSQL holds for each todo that went pending →
// claimed → done through the use cases (docs/design/scale-out.md, "Past one database").
//
// A fresh database; BENCH_FOOTPRINT_TODOS (default 100,000) pending todos seeded in SQL on
// one endpoint (title "bench N", no body or payload), then the claim bench's 16 workers
// claim and complete them all with a small result (`{"ok": true}`). After a VACUUM, each
// table's total size (heap, TOAST and indexes) and its indexes' share are divided by the
// todos. Tables that hold nothing for this workload (no webhook, no session, no rings) are
// left out; the figures are a floor a real deployment's bodies and results add to.

import { createPool } from '../src/db/pool.js';
import { freshEndpoint, switchboardRound } from './claim.js';
import { benchDatabase } from './db.js';

const TODOS = Number(process.env.BENCH_FOOTPRINT_TODOS ?? 100_000);

export async function runFootprintBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: 20 });
  try {
    const endpointId = await freshEndpoint(pool, TODOS);
    const rate = await switchboardRound(pool, endpointId, TODOS);
    await pool.query('VACUUM ANALYZE');
    const sizes = await pool.query<{ relname: string; total: string; indexes: string; rows: string }>(
      `SELECT c.relname, pg_total_relation_size(c.oid) AS total, pg_indexes_size(c.oid) AS indexes,
              c.reltuples::bigint AS rows
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.reltuples > 0
        ORDER BY pg_total_relation_size(c.oid) DESC`,
    );
    process.stdout.write(
      `footprint: ${TODOS} todos claimed and completed by 16 workers (${rate.toFixed(0)} cycles/s) on ${db.server}\n`,
    );
    process.stdout.write('table                      rows   bytes/todo  of it indexes\n');
    let sum = 0;
    for (const r of sizes.rows) {
      const per = Number(r.total) / TODOS;
      sum += per;
      process.stdout.write(
        `${r.relname.padEnd(22)} ${String(r.rows).padStart(8)} ${per.toFixed(0).padStart(12)} ${(Number(r.indexes) / TODOS).toFixed(0).padStart(14)}\n`,
      );
    }
    process.stdout.write(`all tables: ${sum.toFixed(0)} bytes per finished todo\n`);
  } finally {
    await pool.end();
    await db.close();
  }
}
