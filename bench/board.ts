// The board's render-time benchmark (docs/board.md, "Finding todos"): does a page get
// slower as todos pile up? Per size, a database and a `switchboard serve` child of its own
// (SWITCHBOARD_AUTH=off, so the board is the synthetic admin's, who owns the endpoint),
// with that many todos on one endpoint bulk-loaded in SQL: 70% done, 20% pending, 8%
// failed, 2% canceled, titled from a small vocabulary, one in 997 carrying the word
// "needle" (so a search matches a fixed share, as real searches do). Timed: the queues
// page, the todos list, the list searched for "needle" and narrowed to failed, and a
// search for a word no title has — every size's server kept running and measured in
// rotating rounds, the median of all samples. Each figure ÷ the 10k figure (target ≤ 2×),
// with the load average. BENCH_BOARD_ROUNDS (default 4).
//
// BENCH_BOARD_SIZES (default 10000,1000000); BENCH_BOARD_EXPLAIN=1 prints the plans
// (EXPLAIN (ANALYZE, BUFFERS)) of the list's statements at each size.

import { loadavg } from 'node:os';
import { monotonicFactory } from 'ulid';
import { createPool, type Pool, type Queryable } from '../src/db/pool.js';
import { findTodos as findRows } from '../src/store/todo-find.js';
import { titlePattern } from '../src/todos/bulk-actions.js';
import { vendEndpoint } from '../src/endpoints/manage.js';
import { ensureHuman } from '../src/store/humans.js';
import { benchDatabase, median } from './db.js';
import { startServe, type ServeChild } from './serve.js';

const SIZES = (process.env.BENCH_BOARD_SIZES ?? '10000,1000000').split(',').map(Number);
const LOAD_BATCH = 50_000;
/** GETs per page, size and round; the figure is the median of all rounds' samples. */
const SAMPLES = 5;
const ROUNDS = Number(process.env.BENCH_BOARD_ROUNDS ?? 4);
const TARGET = 2;
/** The synthetic admin of SWITCHBOARD_AUTH=off (identity/setup.ts localAdmin). */
const LOCAL_ADMIN = 'hu_00000000000000000000000000';
const WORDS = ['deploy', 'invoice', 'report', 'review', 'backup', 'migrate', 'index', 'refund', 'email', 'audit'];

const PAGES: Record<string, string> = {
  queues: '/',
  list: '/todos',
  'search+state': '/todos?q=needle&state=failed',
  'search, no match': '/todos?q=zzyzx',
};

const ulid = monotonicFactory();

/** Adds `count` todos in creation order over the past days (see the header for the mix). */
async function load(pool: Pool, endpointId: string, count: number): Promise<void> {
  const start = Date.now() - 3 * 86_400_000;
  for (let from = 0; from < count; from += LOAD_BATCH) {
    const n = Math.min(LOAD_BATCH, count - from);
    const ids = Array.from({ length: n }, (_, i) => `td_${ulid(start + from + i)}`);
    await pool.query(
      `WITH rows AS (
         SELECT u.id, $3::bigint + u.i AS k, to_timestamp(($4::bigint + u.i) / 1000.0) AS at
           FROM unnest($5::text[]) WITH ORDINALITY u(id, i)),
       shaped AS (
         SELECT r.*, CASE WHEN r.k % 100 < 70 THEN 'done' WHEN r.k % 100 < 90 THEN 'pending'
                          WHEN r.k % 100 < 98 THEN 'failed' ELSE 'canceled' END AS state
           FROM rows r)
       INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, attempt, ready_at,
                          ring_attempts, completed_at, created_at, updated_at)
       SELECT $1, s.id, 'inbox',
              ($6::text[])[1 + s.k % 10] || ' ' || ($6::text[])[1 + (s.k / 10) % 10] || ' #' || s.k
                || CASE WHEN s.k % 997 = 3 THEN ' needle' ELSE '' END,
              $2, s.state, CASE WHEN s.state = 'pending' THEN 0 ELSE 1 END,
              CASE WHEN s.state = 'pending' THEN s.at END, 6,
              CASE WHEN s.state IN ('done', 'canceled') THEN s.at END, s.at, s.at
         FROM shaped s`,
      [endpointId, LOCAL_ADMIN, from, start + from, ids, WORDS],
    );
  }
}

/** Loads with the trigram index dropped and builds it after (much faster than row by row). */
async function grow(pool: Pool, endpointId: string, size: number): Promise<void> {
  const t0 = Date.now();
  const def = await pool.query<{ indexdef: string }>(
    `SELECT indexdef FROM pg_indexes WHERE indexname = 'todo_titles_trgm_idx'`,
  );
  await pool.query('DROP INDEX todo_titles_trgm_idx');
  await load(pool, endpointId, size);
  await pool.query(def.rows[0]?.indexdef ?? '');
  await pool.query('VACUUM ANALYZE todos');
  await pool.query('VACUUM ANALYZE todo_titles');
  process.stdout.write(`  loaded ${size} todos in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

/** Prints the plan of each list statement, run through a queryable that explains instead. */
async function explain(pool: Pool, endpointId: string): Promise<void> {
  const explaining: Queryable = {
    query: (async (text: string, params: unknown[]) => {
      const res = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params);
      process.stdout.write(`${res.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}\n`);
      return { rows: [] };
    }) as unknown as Queryable['query'],
  };
  const none = { queue: null, state: null, kind: null, source: null, priority: null, priorityMin: null };
  const base = { ...none, endpointId, createdBefore: null, createdAfter: null, before: null, limit: 51 };
  for (const [name, extra] of Object.entries({
    list: { titleLike: null },
    'search+state': { titleLike: titlePattern('needle'), state: 'failed' },
    'search, no match': { titleLike: titlePattern('zzyzx') },
  })) {
    process.stdout.write(`  plan of ${name}:\n`);
    await findRows(explaining, { ...base, ...extra });
  }
}

/** One GET's wall time in ms (the body read); a non-200 answer fails the bench. */
async function timedGet(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url);
  await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  return performance.now() - t0;
}

/** A database of `size` todos and a serve child on it. */
async function prepare(url: string, size: number): Promise<ServeChild> {
  const pool = createPool({ url, max: 4 });
  try {
    await ensureHuman(pool, { id: LOCAL_ADMIN, email: 'admin@localhost', displayName: 'bench', role: 'admin' });
    const vended = await vendEndpoint(
      { db: pool, publicUrl: 'http://bench.test' },
      LOCAL_ADMIN,
      { name: 'board', verbs: ['drain', 'create'] },
      new Date(),
    );
    await grow(pool, vended.endpoint.id, size);
    if (process.env.BENCH_BOARD_EXPLAIN === '1') await explain(pool, vended.endpoint.id);
  } finally {
    await pool.end();
  }
  return startServe(url, { SWITCHBOARD_AUTH: 'off' });
}

/**
 * Every page at every size, ROUNDS times, the sizes' order rotating each round and a
 * warm-up GET before each page's samples, so drift on a shared machine hits every size alike.
 */
async function measure(serves: ServeChild[]): Promise<Record<string, number>[]> {
  const samples = serves.map(() => Object.fromEntries(Object.keys(PAGES).map((k) => [k, [] as number[]])));
  for (let round = 0; round < ROUNDS; round++) {
    for (let j = 0; j < serves.length; j++) {
      const i = (round + j) % serves.length;
      for (const [name, path] of Object.entries(PAGES)) {
        await timedGet((serves[i] as ServeChild).url + path);
        for (let k = 0; k < SAMPLES; k++)
          samples[i]?.[name]?.push(await timedGet((serves[i] as ServeChild).url + path));
      }
    }
  }
  return samples.map((bySize) => Object.fromEntries(Object.entries(bySize).map(([k, v]) => [k, median(v)])));
}

export async function runBoardBench(): Promise<void> {
  const db = await benchDatabase();
  process.stdout.write(`board render time (${db.server}), sizes ${SIZES.join(', ')}\n`);
  const serves: ServeChild[] = [];
  try {
    for (const [i, size] of SIZES.entries()) serves.push(await prepare(i === 0 ? db.url : await db.sibling(), size));
    const figures = await measure(serves);
    for (const [i, f] of figures.entries()) {
      const line = Object.entries(f)
        .map(([k, v]) => `${k} ${v.toFixed(1)} ms`)
        .join(', ');
      process.stdout.write(`  ${SIZES[i]}: ${line}\n`);
    }
    const base = figures[0] ?? {};
    for (const [i, f] of figures.entries()) {
      if (i === 0) continue;
      for (const [k, v] of Object.entries(f)) {
        const ratio = v / (base[k] ?? NaN);
        const verdict = ratio <= TARGET ? 'ok' : 'OVER';
        process.stdout.write(
          `  ${k} at ${SIZES[i]} ÷ at ${SIZES[0]}: ${ratio.toFixed(2)}× (target ≤ ${TARGET}×) ${verdict}\n`,
        );
      }
    }
    process.stdout.write(
      `  load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
  } finally {
    for (const serve of serves) await serve.stop();
    await db.close();
  }
}
