// The todo workload of the reliability suite and what it must prove afterwards.
//
// Three queues on one endpoint: `inbox` (no policy), `capped` (max_in_flight) and
// `metered` (a claims-per-window budget smaller than its todos, plus max_in_flight), so
// `metered` ends with its window spent and the rest of its todos still pending. Workers
// loop claim_next → (work) → complete, with some fail, release and deliberate stalls past
// the lease (whose late complete must be refused) mixed in. Each worker logs what the
// server told it: every complete answered OK, and every complete whose answer was lost
// (ambiguous). Every complete carries {seq, session} in its result, so the stored result
// names the claim it was sent for.
//
// Verdict, from the database and the logs:
// - every todo of inbox and capped is done; metered's are done or pending, none claimed;
// - each done todo has exactly one `completed` attempt, it is the latest attempt, and the
//   stored result names that attempt (seq and session): a complete sent for a lost lease
//   was never applied to a later claim; no attempt is left open;
// - each OK complete a worker was told of is that completed attempt, and no todo has two;
//   each completed attempt was sent by some worker (an OK or an ambiguous complete);
// - admission: per window, used ≤ max_claims_per_window and used = the attempts charged
//   in it; the attempt intervals never overlap more than max_in_flight on a queue.

import type { Pool } from '../src/db/pool.js';
import { setPolicy } from '../src/budgets/service.js';
import { COUNTER_MISMATCHES_SQL } from '../src/store/todo-counts.js';
import { ChaosClient, type Tally } from './client.js';
import type { ClaimLog } from './acknowledged.js';

export const QUEUES = ['inbox', 'capped', 'metered'] as const;
export const CAPPED_IN_FLIGHT = 6;
export const METERED_IN_FLIGHT = 10;

export interface TodoPlan {
  total: number;
  capped: number;
  metered: number;
  /** max_claims_per_window on `metered`: below its todo count, so the window is spent. */
  meteredBudget: number;
}

export function planTodos(total: number): TodoPlan {
  const capped = Math.max(20, Math.round(total * 0.05));
  const metered = Math.max(20, Math.round(total * 0.04));
  return { total, capped, metered, meteredBudget: Math.floor(metered * 0.8) };
}

/** Bulk-loads the todos (max_attempts 100: faults must not dead-letter anything) and writes the policies. */
export async function seedTodos(pool: Pool, endpointId: string, humanId: string, plan: TodoPlan): Promise<void> {
  const inbox = plan.total - plan.capped - plan.metered;
  let offset = 0;
  for (const [queue, n] of [
    ['inbox', inbox],
    ['capped', plan.capped],
    ['metered', plan.metered],
  ] as const) {
    await pool.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, ready_at, created_by_human_id, max_attempts)
       SELECT $1, 'td_chaos' || lpad(g::text, 20, '0'), $2, 'chaos ' || g, now(), $3, 100
         FROM generate_series($4::int + 1, $4::int + $5::int) g`,
      [endpointId, queue, humanId, offset, n],
    );
    offset += n;
  }
  const actor = { humanId, endpointId: null };
  await setPolicy({ db: pool }, actor, endpointId, 'capped', { max_in_flight: CAPPED_IN_FLIGHT });
  await setPolicy({ db: pool }, actor, endpointId, 'metered', {
    max_in_flight: METERED_IN_FLIGHT,
    max_claims_per_window: plan.meteredBudget,
    window: { period: 'day', tz: 'UTC', start: '00:00' },
  });
  await pool.query('VACUUM ANALYZE todos');
}

export interface CompleteLog {
  todo: string;
  seq: number;
  session: string;
  worker: number;
  /** ok: answered OK; ambiguous: the answer was lost and a retry found it settled. */
  outcome: 'ok' | 'ambiguous';
}

/** A question a worker asked with ask_human, and what the human's answer was told. */
export interface AskLog {
  todo: string;
  /** ok: the answer was stored (200); conflict: the todo no longer waited (it must not be lost either way). */
  answer: 'ok' | 'conflict' | 'unknown';
}

export interface WorkStats {
  /** ask_human calls answered OK (the todo parked on a question). */
  asks: number;
  claims: number;
  completes: number;
  fails: number;
  releases: number;
  stalls: number;
  /** complete/fail/release refused with `conflict` (a stall's lost lease, or a lost answer's retry). */
  conflicts: number;
  /** Stalled past the lease and still accepted: the lease was not taken over meanwhile (no one claimed it). */
  stallsAccepted: number;
  empties: number;
  heartbeats: number;
}

export interface WorkerOptions {
  urls: () => string[];
  credential: string;
  tally: Tally;
  stop: () => boolean;
  leaseSeconds: number;
  /** Mean simulated work per todo, ms. */
  workMs: number;
  log: CompleteLog[];
  stats: WorkStats;
  holdStream: boolean;
  /** The owner's answer to a parked todo (docs/design/ask-human.md); absent: workers never ask. */
  answer?: (todoId: string) => Promise<'ok' | 'conflict'>;
  asks?: AskLog[];
  /** Every claim answered, with its lease token (chaos/acknowledged.ts checks them); absent: not kept. */
  claims?: ClaimLog[];
  /** Hand-offs to another endpoint and their replies (chaos/handoffs.ts); absent: workers never hand off. */
  handoff?: WorkerHandoff;
}

/** What a worker does about hand-offs; chaos/handoffs.ts implements it. */
export interface WorkerHandoff {
  /** Before the claim's complete: perhaps hand a child off (a small share of seeded inbox todos). */
  maybeHandOff(c: ChaosClient, todo: { id: string; claims: number; queue: string }, stop: () => boolean): Promise<void>;
  /** Takes and acknowledges the messages queued to this session (hand-off replies). */
  drain(c: ChaosClient): Promise<void>;
  /** After the claim loop: keeps draining until the suite says so, then ends the session. */
  finish(c: ChaosClient): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Settle = 'complete' | 'fail' | 'release' | 'ask_human';

/** Sends a settling verb until the answer is known; `lost` then `conflict` is ambiguous. */
export async function settle(
  c: ChaosClient,
  verb: Settle,
  args: Record<string, unknown>,
  stop: () => boolean,
): Promise<'ok' | 'conflict' | 'ambiguous' | 'gone'> {
  let lostOnce = false;
  for (let tries = 0; tries < 40 && !stop(); tries++) {
    const r = await c.call(verb, args);
    if (r.kind === 'ok') return 'ok';
    if (r.kind === 'tool_error' && (r.code === 'conflict' || r.code === 'not_found')) {
      return lostOnce ? 'ambiguous' : 'conflict';
    }
    // The session was lost (404): the lease belonged to it; whatever happened is settled by the server.
    if (r.kind === 'lost' && r.reason === 'session_lost') return 'gone';
    lostOnce = true;
    await sleep(50 + Math.random() * 150);
  }
  return lostOnce ? 'ambiguous' : 'conflict';
}

export async function runWorker(index: number, o: WorkerOptions): Promise<void> {
  const c = new ChaosClient({
    urls: o.urls,
    credential: o.credential,
    name: `chaos-worker-${index}`,
    tally: o.tally,
    renewSession: true,
  });
  if (!(await c.open(o.stop))) return;
  const streaming = o.holdStream ? c.holdStream(o.stop, () => undefined) : Promise.resolve();
  try {
    while (!o.stop()) {
      // Now and then, the replies queued to this session (a busy agent reads its messages between todos).
      if (o.handoff && Math.random() < 0.1) await o.handoff.drain(c);
      const queue = Math.random() < 0.2 ? QUEUES[Math.floor(Math.random() * QUEUES.length)] : undefined;
      const r = await c.call('claim_next', { lease_seconds: o.leaseSeconds, ...(queue ? { queue } : {}) });
      if (r.kind !== 'ok') {
        await sleep(50 + Math.random() * 100);
        continue;
      }
      const todo = r.value.todo as { id: string; claims: number; attempt: number; queue: string } | undefined;
      if (!todo) {
        o.stats.empties += 1;
        if (o.handoff) await o.handoff.drain(c);
        await sleep(100 + Math.random() * 200);
        continue;
      }
      o.stats.claims += 1;
      const session = c.sessionId ?? '';
      o.claims?.push({ todo: todo.id, seq: todo.claims, session, token: String(r.value.lease_token) });
      const roll = Math.random();
      // A stall outlives the lease: someone may take the todo over, and then the complete must be refused.
      const stall = roll < 0.004;
      if (stall) o.stats.stalls += 1;
      const work = stall ? (o.leaseSeconds + 2) * 1000 : o.workMs * (0.2 + Math.random() * 1.6);
      // Some claims heartbeat halfway through their work; `conflict` there means the todo was lost: drop it.
      if (!stall && roll > 0.9) {
        await sleep(work / 2);
        const beat = await c.call('heartbeat', { id: todo.id, lease_seconds: o.leaseSeconds });
        if (beat.kind === 'ok') o.stats.heartbeats += 1;
        if (beat.kind === 'tool_error' && beat.code === 'conflict') {
          o.stats.conflicts += 1;
          continue;
        }
        await sleep(work / 2);
      } else {
        await sleep(work);
      }
      if (o.stop()) break;
      // One claim in a hundred asks its owner instead, who answers at once; the todo comes back first in line.
      if (!stall && roll >= 0.04 && roll < 0.05 && o.answer && o.asks) {
        await askAndAnswer(c, todo.id, o);
        continue;
      }
      let verb: Settle = 'complete';
      if (!stall && roll < 0.02 && todo.attempt === 1) verb = 'fail';
      else if (!stall && roll < 0.04) verb = 'release';
      // Some completes hand a child off first (its own draw: the rolls above keep their shares).
      if (!stall && verb === 'complete' && o.handoff) await o.handoff.maybeHandOff(c, todo, o.stop);
      const args =
        verb === 'complete'
          ? { id: todo.id, result: { seq: todo.claims, session, worker: index } }
          : verb === 'fail'
            ? { id: todo.id, error: 'chaos: a deliberate failure' }
            : { id: todo.id };
      const answer = await settle(c, verb, args, o.stop);
      if (answer === 'conflict') o.stats.conflicts += 1;
      if (verb === 'complete' && (answer === 'ok' || answer === 'ambiguous')) {
        o.log.push({ todo: todo.id, seq: todo.claims, session, worker: index, outcome: answer });
        if (answer === 'ok') o.stats.completes += 1;
        if (stall && answer === 'ok') o.stats.stallsAccepted += 1;
      }
      if (verb === 'fail' && answer === 'ok') o.stats.fails += 1;
      if (verb === 'release' && answer === 'ok') o.stats.releases += 1;
    }
    if (o.handoff) await o.handoff.finish(c);
  } finally {
    await streaming;
    c.close();
  }
}

/** Parks the todo on a question, then answers it as the owner would; both logged. */
async function askAndAnswer(c: ChaosClient, id: string, o: WorkerOptions): Promise<void> {
  const asked = await settle(c, 'ask_human', { id, question: 'chaos: go on?', choices: ['yes', 'no'] }, o.stop);
  if (asked === 'conflict') o.stats.conflicts += 1;
  if (asked !== 'ok' && asked !== 'ambiguous') return;
  o.stats.asks += 1;
  let answer: AskLog['answer'] = 'unknown';
  for (let tries = 0; tries < 40 && answer === 'unknown'; tries++) {
    try {
      answer = await (o.answer as NonNullable<WorkerOptions['answer']>)(id);
    } catch {
      // The database restarted under the answer: try again, it is all or nothing.
      await sleep(100 + Math.random() * 200);
    }
  }
  o.asks?.push({ todo: id, answer });
}

export function newStats(): WorkStats {
  return {
    asks: 0,
    claims: 0,
    completes: 0,
    fails: 0,
    releases: 0,
    stalls: 0,
    conflicts: 0,
    stallsAccepted: 0,
    empties: 0,
    heartbeats: 0,
  };
}

/** The kind of a hand-off's reply todo (src/grants/reply.ts): on the workers' endpoint, never seeded. */
export const REPLY_KIND = 'handoff_reply';

/** Todos still to finish: inbox and capped not done, metered claimed (its pending rest is held by the spent window). */
export async function remaining(pool: Pool, endpointId: string): Promise<{ open: number; done: number }> {
  const res = await pool.query<{ open: number; done: number }>(
    `SELECT count(*) FILTER (WHERE (queue <> 'metered' AND state <> 'done') OR (queue = 'metered' AND state NOT IN ('done', 'pending')))::int AS open,
            count(*) FILTER (WHERE state = 'done' AND kind IS DISTINCT FROM '${REPLY_KIND}')::int AS done
       FROM todos WHERE endpoint_id = $1`,
    [endpointId],
  );
  return res.rows[0] ?? { open: -1, done: 0 };
}

/** Whether `metered`'s window is spent: from then on its pending todos stay pending. */
export async function meteredSpent(pool: Pool, endpointId: string, plan: TodoPlan): Promise<boolean> {
  const res = await pool.query<{ used: number }>(
    `SELECT coalesce(sum(w.used), 0)::int AS used FROM admission_windows w
       JOIN admission_policies p ON p.id = w.policy_id WHERE p.endpoint_id = $1 AND p.queue = 'metered'`,
    [endpointId],
  );
  return (res.rows[0]?.used ?? 0) >= plan.meteredBudget;
}

export interface Violation {
  check: string;
  detail: string;
}

function add(out: Violation[], check: string, rows: unknown[], limit = 5): void {
  if (rows.length > 0)
    out.push({ check, detail: `${rows.length} case(s), e.g. ${JSON.stringify(rows.slice(0, limit))}` });
}

/** Every todo invariant; an empty list is a pass. */
export async function checkTodos(
  pool: Pool,
  endpointId: string,
  plan: TodoPlan,
  log: CompleteLog[],
  asks: AskLog[] = [],
): Promise<{ violations: Violation[]; facts: string[] }> {
  const out: Violation[] = [];
  const facts: string[] = [];
  const q = async <T extends object>(text: string, values: unknown[] = [endpointId]) =>
    (await pool.query<T>(text, values)).rows;

  // The seeded todos; hand-off replies that came back as todos (chaos/handoffs.ts) are counted apart.
  const states = await q<{ queue: string; state: string; n: number }>(
    `SELECT queue, state, count(*)::int AS n FROM todos WHERE endpoint_id = $1 AND kind IS DISTINCT FROM '${REPLY_KIND}'
      GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  facts.push(`todo states: ${states.map((s) => `${s.queue}/${s.state} ${s.n}`).join(', ')}`);
  const replies = await q<{ queue: string; state: string; n: number }>(
    `SELECT queue, state, count(*)::int AS n FROM todos WHERE endpoint_id = $1 AND kind = '${REPLY_KIND}'
      GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  if (replies.length > 0) {
    facts.push(`reply todos (not seeded): ${replies.map((s) => `${s.queue}/${s.state} ${s.n}`).join(', ')}`);
  }
  // A reply todo is worked like any other while the workers run, and waits when it came after they left.
  add(
    out,
    'reply todos done or pending',
    replies.filter((s) => s.state !== 'done' && s.state !== 'pending'),
  );
  const total = states.reduce((n, s) => n + s.n, 0);
  if (total !== plan.total) out.push({ check: 'todo count', detail: `${total} todos, expected ${plan.total}` });
  add(
    out,
    'the todo counters equal count(*) per (endpoint, queue, state)',
    await q<object>(COUNTER_MISMATCHES_SQL, []),
  );
  add(
    out,
    'inbox and capped todos all done',
    states.filter((s) => s.queue !== 'metered' && s.state !== 'done'),
  );
  add(
    out,
    'metered todos done or pending (held by the spent window)',
    states.filter((s) => s.queue === 'metered' && s.state !== 'done' && s.state !== 'pending'),
  );

  // docs/design/ask-human.md: a todo never is both waiting on a human and anything else.
  add(
    out,
    'a todo is never in two states: it has an open question exactly when it is waiting on a human',
    await q(
      `SELECT t.id, t.state, count(k.*) FILTER (WHERE k.ended_at IS NULL)::int AS open FROM todos t
         LEFT JOIN todo_asks k ON k.endpoint_id = t.endpoint_id AND k.todo_id = t.id
        WHERE t.endpoint_id = $1 GROUP BY t.id, t.state
       HAVING (count(k.*) FILTER (WHERE k.ended_at IS NULL) > 0) <> (t.state = 'waiting_on_human')
           OR count(k.*) FILTER (WHERE k.ended_at IS NULL) > 1`,
    ),
  );
  const answered = new Set(
    (
      await q<{ todo_id: string }>(
        `SELECT DISTINCT todo_id FROM todo_asks WHERE endpoint_id = $1 AND outcome = 'answered'`,
      )
    ).map((r) => r.todo_id),
  );
  add(
    out,
    'an answer is never lost: each answer told OK is stored as answered',
    asks.filter((a) => a.answer === 'ok' && !answered.has(a.todo)),
  );
  add(
    out,
    'every question asked was answered (none told conflict or left unknown)',
    asks.filter((a) => a.answer !== 'ok'),
  );
  facts.push(`asks: ${asks.length} asked, ${answered.size} todos answered`);
  add(
    out,
    'no attempt left open',
    await q(`SELECT todo_id, seq, session_id FROM todo_attempts WHERE endpoint_id = $1 AND ended_at IS NULL`),
  );
  add(
    out,
    'each done todo has exactly one completed attempt, others none',
    await q(
      `SELECT t.id, t.state, count(a.*) FILTER (WHERE a.outcome = 'completed')::int AS completed
         FROM todos t LEFT JOIN todo_attempts a ON a.endpoint_id = t.endpoint_id AND a.todo_id = t.id
        WHERE t.endpoint_id = $1 GROUP BY t.id, t.state
       HAVING count(a.*) FILTER (WHERE a.outcome = 'completed') <> (CASE WHEN t.state = 'done' THEN 1 ELSE 0 END)`,
    ),
  );
  add(
    out,
    'the completed attempt is the latest attempt, and the stored result names it (no stale complete applied)',
    await q(
      `SELECT t.id, t.claims, a.seq, a.session_id, t.result FROM todos t
         JOIN todo_attempts a ON a.endpoint_id = t.endpoint_id AND a.todo_id = t.id AND a.outcome = 'completed'
        WHERE t.endpoint_id = $1 AND (a.seq <> t.claims OR (t.result->>'seq')::int IS DISTINCT FROM a.seq
           OR t.result->>'session' IS DISTINCT FROM a.session_id)`,
    ),
  );
  add(
    out,
    'attempt rows number 1..claims with no gap',
    await q(
      `SELECT t.id, t.claims, count(a.*)::int AS rows, max(a.seq) AS max_seq FROM todos t
         LEFT JOIN todo_attempts a ON a.endpoint_id = t.endpoint_id AND a.todo_id = t.id
        WHERE t.endpoint_id = $1 GROUP BY t.id, t.claims
       HAVING count(a.*) <> t.claims OR coalesce(max(a.seq), 0) <> t.claims`,
    ),
  );

  // The workers' logs against the attempt rows.
  const completed = new Map<string, { seq: number; session: string }>();
  for (const r of await q<{ todo_id: string; seq: number; session_id: string }>(
    `SELECT todo_id, seq, session_id FROM todo_attempts WHERE endpoint_id = $1 AND outcome = 'completed'`,
  )) {
    completed.set(r.todo_id, { seq: r.seq, session: r.session_id });
  }
  const oks = new Map<string, CompleteLog[]>();
  const sent = new Set<string>();
  for (const entry of log) {
    sent.add(`${entry.todo}/${entry.seq}/${entry.session}`);
    if (entry.outcome === 'ok') oks.set(entry.todo, [...(oks.get(entry.todo) ?? []), entry]);
  }
  add(
    out,
    'no todo was answered OK to two completes',
    [...oks.values()].filter((l) => l.length > 1),
  );
  add(
    out,
    'each OK complete is the attempt the database closed as completed',
    [...oks.values()].flat().filter((e) => {
      const c = completed.get(e.todo);
      return !c || c.seq !== e.seq || c.session !== e.session;
    }),
  );
  add(
    out,
    'each completed attempt was sent by a worker for that very claim',
    [...completed].filter(([todo, c]) => !sent.has(`${todo}/${c.seq}/${c.session}`)),
  );
  facts.push(
    `completes logged: ${log.filter((e) => e.outcome === 'ok').length} OK, ${log.filter((e) => e.outcome === 'ambiguous').length} ambiguous (answer lost, then found settled)`,
  );

  // Admission: the window counter against the budget and against the attempt rows it charged.
  const windows = await q<{ window_start: Date; used: number; max: number; charged: number }>(
    `SELECT w.window_start, w.used, p.max_claims_per_window AS max,
            (SELECT count(*)::int FROM todo_attempts a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
              WHERE a.endpoint_id = p.endpoint_id AND t.queue = p.queue
                AND a.claimed_at >= w.window_start AND a.claimed_at < w.window_start + interval '1 day') AS charged
       FROM admission_windows w JOIN admission_policies p ON p.id = w.policy_id
      WHERE p.endpoint_id = $1 AND p.queue = 'metered'`,
  );
  facts.push(
    `metered windows: ${windows.map((w) => `${w.window_start.toISOString()} used ${w.used}/${w.max}, attempts ${w.charged}`).join('; ')}`,
  );
  add(
    out,
    'per window, charged claims ≤ max_claims_per_window',
    windows.filter((w) => w.used > w.max || w.charged > w.max),
  );
  add(
    out,
    'per window, the counter equals the attempts charged (one unit per committed claim)',
    windows.filter((w) => w.used !== w.charged),
  );
  const meteredAttempts = await q<{ n: number }>(
    `SELECT count(*)::int AS n FROM todo_attempts a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
      WHERE a.endpoint_id = $1 AND t.queue = 'metered'`,
  );
  const charged = windows.reduce((n, w) => n + w.charged, 0);
  if ((meteredAttempts[0]?.n ?? 0) !== charged) {
    out.push({
      check: 'every metered attempt falls in a counted window',
      detail: `${meteredAttempts[0]?.n} attempts, ${charged} in windows`,
    });
  }
  for (const [queue, cap] of [
    ['capped', CAPPED_IN_FLIGHT],
    ['metered', METERED_IN_FLIGHT],
  ] as const) {
    const peak = await peakInFlight(pool, endpointId, queue);
    facts.push(`${queue}: peak in flight ${peak.peak} (max_in_flight ${cap}) at ${peak.at}`);
    if (peak.peak > cap)
      out.push({ check: `in flight ≤ max_in_flight on ${queue}`, detail: `peak ${peak.peak} at ${peak.at}` });
  }
  return { violations: out, facts };
}

/** The most attempts of one queue open at any instant (an end sorts before a start at the same instant). */
async function peakInFlight(pool: Pool, endpointId: string, queue: string): Promise<{ peak: number; at: string }> {
  const res = await pool.query<{ at: Date; delta: number }>(
    `SELECT a.claimed_at AS at, 1 AS delta FROM todo_attempts a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
      WHERE a.endpoint_id = $1 AND t.queue = $2
     UNION ALL
     SELECT a.ended_at, -1 FROM todo_attempts a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
      WHERE a.endpoint_id = $1 AND t.queue = $2 AND a.ended_at IS NOT NULL
     ORDER BY at, delta`,
    [endpointId, queue],
  );
  let now = 0;
  let peak = 0;
  let at = '';
  for (const e of res.rows) {
    now += e.delta;
    if (now > peak) {
      peak = now;
      at = e.at.toISOString();
    }
  }
  return { peak, at };
}
