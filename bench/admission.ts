// Admission's cost on the claim path (docs/design/admission.md), in one run on one database.
//
// foundation: 16 workers loop claim_next → complete with the claim and complete
//   statements exactly as they were before admission existed (copied below), through
//   the same pool and the same named-statement protocol.
// no policy: the same loop through this change's claim path (src/todos/claim-loop.ts) and
//   complete statement on a queue without a policy: the claim statement's policy probe is
//   one indexed miss; complete reads no policy for a claim made where none existed (it
//   returns claimed_under_policy, and only such a claim's settling looks for a held
//   policy to reopen). Input parsing, unchanged by this
//   change, is left out of all three so the figures compare the paths themselves.
// budgeted: the same loop on a hot queue with a generous policy (in-flight 10,000, a
//   million claims a day): each claim is the probe (reads the policy) and the admit
//   statement (todo lock, then policy lock in admission_admit(), counters, charge, claim).
// Rounds alternate which of foundation and no policy runs first (budgeted runs last), so
// an even number of rounds puts each first equally often. On this shared machine a
// round's position decided more than the path did: in two runs on 2026-11-30 the first
// runner won 8 of 10 rounds, in the next (budgeted always just before the first) the
// second runner won 6 of 6. So each path drains its own database on the same server
// (the second runner no longer works over the first one's dead rows and vacuum), and
// each timed round starts right after a CHECKPOINT (no round inherits another's
// full-page writes). Targets:
// no policy ≥ 0.95 × foundation (median of per-round ratios); budgeted ≥ 600 claims/s
// on the 2-core development machine.
// Each round also reports CPU per claim → complete cycle, of this process and of the
// PostgreSQL backends (read from /proc when PostgreSQL runs on this machine): on a
// machine others load, claims/s follows whatever CPU share the round got, while the
// CPU a cycle costs moves much less.

import { randomBytes } from 'node:crypto';
import { setPolicy } from '../src/budgets/service.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { newId } from '../src/domain/ids.js';
import { insertEndpoint } from '../src/store/endpoints.js';
import { insertHuman } from '../src/store/humans.js';
import { CLAIMABLE, CLAIM_RANK, TODO_SUMMARY_COLUMNS, closeAttemptSql, todoColumnsOf } from '../src/store/todo-sql.js';
import { admitNext } from '../src/todos/claim-loop.js';
import { reopenQueue } from '../src/budgets/reopen.js';
import { ACKED_RINGS, complete } from '../src/store/claims.js';
import { WORKERS, seedTodos, timed } from './claim.js';
import { backendCpu, backendCpuUsed } from './cpu.js';
import { benchDatabase, median } from './db.js';

const TODOS = Number(process.env.BENCH_TODOS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

// The foundation's claim_next (one queue) and complete, verbatim from before admission
// (in the claim order of 0014_work_model.sql, which its ready index now holds),
// plus the ring acknowledgement every claim statement now carries
// (docs/design/doorbell-acknowledgement.md, not admission's), so the comparison isolates
// what admission adds.
const FOUNDATION_CLAIM = `WITH pick AS (
  SELECT t.endpoint_id, t.id, t.claims FROM todos t
   WHERE t.endpoint_id = $1 AND t.queue = ($2::text[])[1] AND ${CLAIMABLE}
   ORDER BY ${CLAIM_RANK} DESC, t.ready_at
   LIMIT 1 FOR UPDATE SKIP LOCKED),
    closed AS (${closeAttemptSql('pick', 'lease_expired')} RETURNING a.seq),
    claimed AS (
      UPDATE todos t SET
        state = 'claimed', owner_session_id = $3, attempt = t.attempt + 1, claims = t.claims + 1,
        lease_expires_at = now() + make_interval(secs => $4), claimed_at = now(), next_retry_at = NULL,
        ready_at = CASE WHEN t.attempt + 1 < t.max_attempts THEN now() + make_interval(secs => $4) END,
        updated_at = now()
      FROM pick WHERE t.endpoint_id = pick.endpoint_id AND t.id = pick.id
      RETURNING ${todoColumnsOf('t')}, (SELECT count(*) FROM closed) AS taken_over),
    opened AS (
      INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at)
      SELECT endpoint_id, id, claims, attempt, owner_session_id, claimed_at, lease_expires_at FROM claimed)
    SELECT claimed.*, ${ACKED_RINGS} AS rings FROM claimed`;
const FOUNDATION_COMPLETE = `WITH r AS (
       UPDATE todos t SET state = 'done', result = $4::jsonb, completed_at = now(),
         lease_expires_at = NULL, ready_at = NULL, updated_at = now()
       WHERE t.endpoint_id = $1 AND t.id = $2 AND t.state = 'claimed' AND t.owner_session_id = $3
       RETURNING ${todoColumnsOf('t', TODO_SUMMARY_COLUMNS)}),
     closed AS (${closeAttemptSql('r', 'completed')})
     SELECT * FROM r`;

async function freshEndpoint(pool: Pool, budget: boolean, todos: number): Promise<string> {
  const tag = randomBytes(4).toString('hex');
  const human = await insertHuman(pool, {
    id: newId('hu'),
    email: `b-${tag}@example.test`,
    displayName: tag,
    role: 'admin',
  });
  const endpoint = await insertEndpoint(pool, {
    id: newId('ep'),
    humanId: human.id,
    name: `bench-${tag}`,
    slug: `bench-${tag}`,
    queues: ['inbox'],
    verbs: [],
    defaultLeaseSeconds: null,
    expiresAt: null,
  });
  if (budget) {
    await setPolicy({ db: pool }, { humanId: human.id, endpointId: null }, endpoint.id, 'inbox', {
      max_in_flight: 10_000,
      max_claims_per_window: 1_000_000,
      window: { period: 'day', tz: 'America/Los_Angeles', start: '00:00' },
    });
  }
  await seedTodos(pool, endpoint.id, todos);
  return endpoint.id;
}

async function foundationRound(pool: Pool, endpointId: string, todos: number): Promise<number> {
  return timed(
    Array.from({ length: WORKERS }, (_, w) => async () => {
      let n = 0;
      for (;;) {
        const values = [endpointId, ['inbox'], `foundation-${w}`, 300];
        const claimed = await pool.query<{ id: string }>({ name: 'foundation_claim', text: FOUNDATION_CLAIM, values });
        const id = claimed.rows[0]?.id;
        if (!id) return n;
        await pool.query({
          name: 'foundation_complete',
          text: FOUNDATION_COMPLETE,
          values: [endpointId, id, `foundation-${w}`, '{"ok":true}'],
        });
        n += 1;
      }
    }),
    todos,
  );
}

/** This change's path below input parsing: admitNext, then complete and its reopen check. */
async function currentRound(pool: Pool, endpointId: string, todos: number): Promise<number> {
  return timed(
    Array.from({ length: WORKERS }, (_, w) => async () => {
      const args = { endpointId, queues: ['inbox'], sessionId: `current-${w}`, leaseSeconds: 300 };
      let n = 0;
      for (;;) {
        const { claimed } = await admitNext(pool, args);
        if (!claimed) return n;
        const done = await complete(pool, {
          endpointId,
          id: claimed.todo.id,
          sessionId: args.sessionId,
          result: { ok: true },
        });
        if ((done as { under_policy?: boolean } | null)?.under_policy) await reopenQueue(pool, endpointId, 'inbox');
        n += 1;
      }
    }),
    todos,
  );
}

type Kind = 'foundation' | 'none' | 'budgeted';

/** A round's throughput and CPU microseconds per cycle: this process's, and PostgreSQL's (NaN when not local). */
interface Figures {
  rate: number;
  nodeUs: number;
  pgUs: number;
}

/** A path's own database: its pool of WORKERS connections and an observer connection. */
interface Place {
  pool: Pool;
  /** Reads the workers' backends' CPU from its own connection (a backend is not counted by itself). */
  observer: Pool;
}

async function round({ pool, observer }: Place, kind: Kind, todos = TODOS): Promise<Figures> {
  const endpointId = await freshEndpoint(pool, kind === 'budgeted', todos);
  // After a checkpoint the first write to each page logs the whole page: every round
  // starts right after one, so none inherits another's share of those writes.
  await observer.query('CHECKPOINT');
  const backends = await backendCpu(observer);
  const cpu = process.cpuUsage();
  const rate =
    kind === 'foundation'
      ? await foundationRound(pool, endpointId, todos)
      : await currentRound(pool, endpointId, todos);
  const used = process.cpuUsage(cpu);
  const pg = backendCpuUsed(backends, await backendCpu(observer));
  return { rate, nodeUs: (used.user + used.system) / todos, pgUs: pg === null ? NaN : (pg * 1e6) / todos };
}

const show = (f: Figures | undefined) =>
  f ? `${f.rate.toFixed(0)}/s (CPU µs/cycle: node ${f.nodeUs.toFixed(0)}, pg ${f.pgUs.toFixed(0)})` : '-';

export async function runAdmissionBench(): Promise<void> {
  const db = await benchDatabase();
  // Each path drains its own database on the one server: on a shared table the second
  // runner of a round worked over the first one's dead rows and vacuum, so a round's
  // position decided more than the path did (see the header).
  const places = {} as Record<Kind, Place>;
  for (const kind of ['foundation', 'none', 'budgeted'] as const) {
    const url = kind === 'foundation' ? db.url : await db.sibling();
    places[kind] = { pool: createPool({ url, max: WORKERS }), observer: createPool({ url, max: 1 }) };
  }
  try {
    process.stdout.write(
      `admission bench: ${WORKERS} workers, ${TODOS} todos a round, ${ROUNDS} rounds, on ${db.server}\n`,
    );
    for (const kind of ['foundation', 'none', 'budgeted'] as const) await round(places[kind], kind, 1_000);
    const results: Record<Kind, Figures[]> = { foundation: [], none: [], budgeted: [] };
    const orders: Kind[][] = [
      ['foundation', 'none', 'budgeted'],
      ['none', 'foundation', 'budgeted'],
    ];
    for (let r = 0; r < ROUNDS; r++) {
      for (const kind of orders[r % orders.length] ?? []) results[kind].push(await round(places[kind], kind));
      process.stdout.write(
        `  round ${r + 1}: foundation ${show(results.foundation.at(-1))}, no policy ` +
          `${show(results.none.at(-1))}, budgeted ${show(results.budgeted.at(-1))}\n`,
      );
    }
    const rates = (k: Kind) => results[k].map((f) => f.rate);
    const cpu = (k: Kind) => median(results[k].map((f) => f.nodeUs + f.pgUs));
    const ratios = results.none.map((n, i) => n.rate / (results.foundation[i]?.rate ?? n.rate));
    const ratio = median(ratios);
    // Per order: the geometric mean of the two orders' medians cancels a steady first-runner edge.
    const byOrder = [0, 1].map((o) => median(ratios.filter((_, i) => i % 2 === o)));
    const balanced = Math.sqrt((byOrder[0] ?? NaN) * (byOrder[1] ?? NaN));
    const cpuRatio = median(
      results.none.map((n, i) => {
        const f = results.foundation[i];
        return f ? (f.nodeUs + f.pgUs) / (n.nodeUs + n.pgUs) : NaN;
      }),
    );
    const cpuOf = (k: Kind) =>
      `node ${median(results[k].map((f) => f.nodeUs)).toFixed(0)} + pg ${median(results[k].map((f) => f.pgUs)).toFixed(0)} = ${cpu(k).toFixed(0)}`;
    process.stdout.write(
      `foundation (pre-admission SQL)  ${median(rates('foundation')).toFixed(0)} claims/s, CPU µs/cycle ${cpuOf('foundation')}\n` +
        `no policy                       ${median(rates('none')).toFixed(0)} claims/s, CPU µs/cycle ${cpuOf('none')}\n` +
        `ratio no policy / foundation    ${ratio.toFixed(3)} (target ≥ 0.95); by CPU per cycle ${cpuRatio.toFixed(3)}\n` +
        `  foundation first ${byOrder[0]?.toFixed(3)}, no policy first ${byOrder[1]?.toFixed(3)}, ` +
        `geometric mean ${balanced.toFixed(3)}\n` +
        `budgeted (hot queue)            ${median(rates('budgeted')).toFixed(0)} claims/s (target ≥ 600), CPU µs/cycle ${cpuOf('budgeted')}\n`,
    );
  } finally {
    for (const { pool, observer } of Object.values(places)) {
      await observer.end();
      await pool.end();
    }
    await db.close();
  }
}
