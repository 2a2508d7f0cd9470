// Ingest with routing rules (docs/design/routing.md): token-webhook deliveries/s through
// `POST /webhooks/{token}` on a real `serve` child, to a webhook with no rules and to one
// with 32 rules where only the last matches (the worst case: all 32 `when`s run, then the
// route's title template), on an endpoint with the scale rule's backlog already present
// (BENCH_ROUTING_BACKLOG pending todos, default 1,000,000, seeded in SQL). Rounds
// alternate which webhook goes first; the ratio is the median of per-round ratios.
// Target: 32 rules ÷ none ≥ 0.8.

import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { createPool } from '../src/db/pool.js';
import { newId } from '../src/domain/ids.js';
import { newSecret } from '../src/identity/secrets.js';
import { insertApiToken } from '../src/store/api-tokens.js';
import { benchDatabase, median, vendBenchEndpoint } from './db.js';
import { startServe, type ServeChild } from './serve.js';

const BACKLOG = Number(process.env.BENCH_ROUTING_BACKLOG ?? 1_000_000);
const DELIVERIES = Number(process.env.BENCH_ROUTING_DELIVERIES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUTING_ROUNDS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_ROUTING_CONCURRENCY ?? 8);

/** 31 realistic rules that do not match a delivery of kind "ticket", then the one that does. */
export function worstCaseRules(): unknown[] {
  const kinds = ['push', 'ping', 'deploy', 'release', 'alert', 'comment', 'review', 'build'];
  const rules: unknown[] = [];
  for (let i = 0; i < 31; i++) {
    const kind = kinds[i % kinds.length] ?? 'push';
    rules.push(
      i % 3 === 0
        ? { name: `drop ${kind} ${i}`, when: `payload.?kind.orValue("") == "${kind}-${i}"`, then: { action: 'drop' } }
        : i % 3 === 1
          ? {
              name: `urgent ${kind} ${i}`,
              when: `payload.?kind.orValue("") == "${kind}" && payload.?severity.orValue(0) > ${i}`,
              then: { action: 'route', title: `${kind}: {{ payload.ticket }}`, priority: 5 },
            }
          : {
              name: `labelled ${kind} ${i}`,
              when: `"${kind}-${i}" in payload.?labels.orValue([])`,
              then: { action: 'quarantine', reason: `${kind} needs review` },
            },
    );
  }
  rules.push({
    name: 'tickets',
    when: 'payload.?kind.orValue("") == "ticket" && payload.?severity.orValue(0) >= 1',
    then: { action: 'route', title: 'Ticket {{ payload.ticket }} (severity {{ payload.severity }})', kind: 'ticket' },
  });
  return rules;
}

async function api<T>(serve: ServeChild, token: string, method: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${serve.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as T;
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return answer;
}

/** Deliveries/s of DELIVERIES token POSTs, CONCURRENCY at a time; each must make its todo. */
async function round(serve: ServeChild, hookPath: string, tag: string): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < DELIVERIES) {
      const i = next++;
      const res = await fetch(`${serve.url}${hookPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: `ticket ${tag} ${i}`, kind: 'ticket', severity: 2, ticket: `${tag}-${i}` }),
      });
      const answer = (await res.json()) as { disposition?: string };
      if (!res.ok || answer.disposition !== 'routed')
        throw new Error(`delivery answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return DELIVERIES / ((performance.now() - started) / 1000);
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export async function runRoutingBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: 2 });
  const serve = await startServe(db.url, { SWITCHBOARD_WEBHOOK_RATE: '1000000', SWITCHBOARD_WEBHOOK_BURST: '1000000' });
  try {
    const { humanId, endpointId } = await vendBenchEndpoint(pool);
    const { secret, hash } = newSecret('sbt');
    await insertApiToken(pool, {
      id: newId('tk'),
      humanId,
      kind: 'human',
      name: 'bench',
      tokenHash: hash,
      expiresAt: null,
    });
    const slug = (await pool.query<{ slug: string }>('SELECT slug FROM endpoints WHERE id = $1', [endpointId])).rows[0]
      ?.slug;
    const seeded = performance.now();
    for (let from = 0; from < BACKLOG; from += 100_000) {
      await pool.query(
        `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, ready_at, created_at, updated_at)
         SELECT $1, 'td_0BACKLOG' || lpad(g::text, 16, '0'), 'inbox', 'backlog', $2, now(), now(), now()
           FROM generate_series($3::int, $4::int) g`,
        [endpointId, humanId, from, Math.min(BACKLOG, from + 100_000) - 1],
      );
    }
    await pool.query('VACUUM ANALYZE todos');
    const hooks: Record<'none' | 'rules', string> = { none: '', rules: '' };
    for (const name of ['none', 'rules'] as const) {
      const made = await api<{ webhook: { id: string }; url: string }>(
        serve,
        secret,
        'POST',
        `/api/v1/endpoints/${slug}/webhooks`,
        { queue: 'inbox', name },
      );
      hooks[name] = new URL(made.url).pathname;
      if (name === 'rules')
        await api(serve, secret, 'PUT', `/api/v1/webhooks/${made.webhook.id}/rules`, { rules: worstCaseRules() });
    }
    process.stdout.write(
      `routing: ${DELIVERIES} token deliveries per round, ${CONCURRENCY} at a time, ${BACKLOG} pending todos seeded in ` +
        `${((performance.now() - seeded) / 1000).toFixed(0)} s, ${db.server}, load ${load()}\n`,
    );
    await round(serve, hooks.none, 'warm-n');
    await round(serve, hooks.rules, 'warm-r');
    const rounds: { none: number; rules: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const rulesFirst = r % 2 === 1;
      const first = await round(serve, rulesFirst ? hooks.rules : hooks.none, `a${r}`);
      const second = await round(serve, rulesFirst ? hooks.none : hooks.rules, `b${r}`);
      const x = rulesFirst ? { rules: first, none: second } : { none: first, rules: second };
      rounds.push(x);
      process.stdout.write(
        `  round ${r + 1}: no rules ${x.none.toFixed(0)}/s, 32 rules ${x.rules.toFixed(0)}/s, ratio ${(x.rules / x.none).toFixed(3)}\n`,
      );
    }
    process.stdout.write(
      `no rules                       ${median(rounds.map((x) => x.none)).toFixed(0)} deliveries/s\n` +
        `32 rules, the last matching    ${median(rounds.map((x) => x.rules)).toFixed(0)} deliveries/s\n` +
        `32 rules ÷ none                ${median(rounds.map((x) => x.rules / x.none)).toFixed(3)} (target ≥ 0.8)\n` +
        `load average after             ${load()}\n`,
    );
  } finally {
    await serve.stop();
    await pool.end();
    await db.close();
  }
}
