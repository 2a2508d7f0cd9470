// Bulk create through the API: todos/s through one stream of POST /api/v1/endpoints/{ref}/todos
// requests of 1,000 items each (docs/design/todos.md, "Bulk create"), against the raw
// INSERT floor measured in the same run on the same database.
//
// bulk: a `serve` child process (bench/serve.ts) on the bench database; this process sends
// the requests one after another with a human API token, each item a title and a small
// payload, without keys (`bulk`) and with a distinct idempotency key per item (`bulk,
// keyed`: the key lookup runs for every item). Every request pays what a client's does:
// HTTP, JSON of ~100 KiB each way, the bearer, validation of every item, one statement.
// floor: the same rows in statements of 1,000 through unnest from this process: the
// INSERT alone, no HTTP, no validation, no key lookup, no notification.
// Rounds alternate which goes first; ratios are medians of per-round ratios.
// Target: bulk ≥ 5,000 todos/s.

import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { createPool, type Pool } from '../src/db/pool.js';
import { newId } from '../src/domain/ids.js';
import { newSecret } from '../src/identity/secrets.js';
import { insertApiToken } from '../src/store/api-tokens.js';
import { benchDatabase, median, vendBenchEndpoint } from './db.js';
import { startServe, type ServeChild } from './serve.js';

const TODOS = Number(process.env.BENCH_TODOS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH = 1000;

interface Target {
  slug: string;
  endpointId: string;
  humanId: string;
  token: string;
}

async function target(pool: Pool): Promise<Target> {
  const { humanId, endpointId } = await vendBenchEndpoint(pool);
  const { secret, hash } = newSecret('sbt');
  await insertApiToken(pool, {
    id: newId('tk'),
    humanId,
    kind: 'workflow',
    name: 'bench',
    tokenHash: hash,
    expiresAt: null,
  });
  const slug = (await pool.query<{ slug: string }>('SELECT slug FROM endpoints WHERE id = $1', [endpointId])).rows[0]
    ?.slug;
  if (!slug) throw new Error('no slug for the bench endpoint');
  return { slug, endpointId, humanId, token: secret };
}

const item = (round: string, i: number, keyed: boolean) => ({
  queue: 'inbox',
  title: `bulk ${round} ${i}`,
  payload: { n: i, source: 'bench' },
  ...(keyed ? { idempotency_key: `${round}-${i}` } : {}),
});

/** todos/s of TODOS items through sequential bulk requests. */
async function bulkRound(serve: ServeChild, t: Target, round: string, keyed: boolean): Promise<number> {
  const started = performance.now();
  for (let from = 0; from < TODOS; from += BATCH) {
    const todos = Array.from({ length: Math.min(BATCH, TODOS - from) }, (_, i) => item(round, from + i, keyed));
    const res = await fetch(`${serve.url}/api/v1/endpoints/${t.slug}/todos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ todos }),
    });
    const answer = (await res.json()) as { created?: number };
    if (res.status !== 201 || answer.created !== todos.length) {
      throw new Error(`bulk request answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    }
  }
  return TODOS / ((performance.now() - started) / 1000);
}

/** todos/s of the same rows through bare multi-row INSERTs. */
async function floorRound(pool: Pool, t: Target, round: string): Promise<number> {
  const started = performance.now();
  for (let from = 0; from < TODOS; from += BATCH) {
    const n = Math.min(BATCH, TODOS - from);
    const rows = Array.from({ length: n }, (_, i) => item(round, from + i, false));
    await pool.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, payload, source, created_by_human_id, ready_at)
       SELECT $1, id, 'inbox', title, payload::jsonb, 'api', $2, now()
         FROM unnest($3::text[], $4::text[], $5::text[]) AS i(id, title, payload)`,
      [
        t.endpointId,
        t.humanId,
        rows.map(() => newId('td')),
        rows.map((r) => r.title),
        rows.map((r) => JSON.stringify(r.payload)),
      ],
    );
  }
  return TODOS / ((performance.now() - started) / 1000);
}

export async function runBulkBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: 2 });
  const serve = await startServe(db.url);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  try {
    const t = await target(pool);
    process.stdout.write(`bulk create: ${TODOS} todos per round in requests of ${BATCH}, ${db.server}, load ${load}\n`);
    await bulkRound(serve, t, 'warm', false);
    await floorRound(pool, t, 'warm');
    const rounds: { bulk: number; keyed: number; floor: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const floorFirst = r % 2 === 1;
      const floor0 = floorFirst ? await floorRound(pool, t, `f${r}`) : 0;
      const bulk = await bulkRound(serve, t, `b${r}`, false);
      const keyed = await bulkRound(serve, t, `k${r}`, true);
      const floor = floorFirst ? floor0 : await floorRound(pool, t, `f${r}`);
      rounds.push({ bulk, keyed, floor });
      process.stdout.write(
        `  round ${r + 1}: bulk ${bulk.toFixed(0)}/s, keyed ${keyed.toFixed(0)}/s, floor ${floor.toFixed(0)}/s\n`,
      );
    }
    const ratio = (pick: (x: (typeof rounds)[number]) => number) => median(rounds.map((x) => pick(x) / x.floor));
    process.stdout.write(
      `bulk (no keys)                 ${median(rounds.map((x) => x.bulk)).toFixed(0)} todos/s (target ≥ 5000)\n` +
        `bulk (a key per item)          ${median(rounds.map((x) => x.keyed)).toFixed(0)} todos/s\n` +
        `raw INSERT floor               ${median(rounds.map((x) => x.floor)).toFixed(0)} todos/s\n` +
        `bulk ÷ floor                   ${ratio((x) => x.bulk).toFixed(3)}; keyed ÷ floor ${ratio((x) => x.keyed).toFixed(3)}\n` +
        `load average after             ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}\n`,
    );
  } finally {
    await serve.stop();
    await pool.end();
    await db.close();
  }
}
