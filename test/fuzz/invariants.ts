// The database invariants checked after a fuzz run, each a named SQL query that returns
// the offending rows (none when it holds): every CHECK constraint re-evaluated over every
// row, and the cross-row invariants of docs/design/ (todos.md, admission.md,
// message-queue.md, hooks-and-presence.md) that no constraint states.

import type { Pool } from '../../src/db/pool.js';
import { COUNTER_MISMATCHES_SQL } from '../../src/store/todo-counts.js';

export interface Invariant {
  name: string;
  sql: string;
}

export const INVARIANTS: Invariant[] = [
  {
    name: 'the todo counters equal count(*) per (endpoint, queue, state)',
    sql: COUNTER_MISMATCHES_SQL,
  },
  {
    name: 'at most one open attempt per todo',
    sql: `SELECT endpoint_id, todo_id, count(*) AS open FROM todo_attempts
          WHERE ended_at IS NULL GROUP BY endpoint_id, todo_id HAVING count(*) > 1`,
  },
  {
    // No foreign key states it since 0011: the claim statement inserts attempts under the
    // todo's lock, and a trigger deletes them with their todo.
    name: 'every attempt belongs to an existing todo',
    sql: `SELECT a.endpoint_id, a.todo_id, a.seq FROM todo_attempts a
          WHERE NOT EXISTS (SELECT 1 FROM todos t WHERE t.endpoint_id = a.endpoint_id AND t.id = a.todo_id)`,
  },
  {
    name: 'a claimed todo has an owner and a lease',
    sql: `SELECT endpoint_id, id FROM todos
          WHERE state = 'claimed' AND (owner_session_id IS NULL OR lease_expires_at IS NULL OR claimed_at IS NULL)`,
  },
  {
    name: 'a claimed todo has its latest attempt open',
    sql: `SELECT t.endpoint_id, t.id, t.claims FROM todos t
          WHERE t.state = 'claimed' AND NOT EXISTS (
            SELECT 1 FROM todo_attempts a WHERE a.endpoint_id = t.endpoint_id AND a.todo_id = t.id
              AND a.seq = t.claims AND a.ended_at IS NULL)`,
  },
  {
    name: 'a todo that is not claimed has no open attempt (done, failed, canceled, pending, waiting_on_human)',
    sql: `SELECT t.endpoint_id, t.id, t.state FROM todos t
          WHERE t.state <> 'claimed' AND EXISTS (
            SELECT 1 FROM todo_attempts a WHERE a.endpoint_id = t.endpoint_id AND a.todo_id = t.id AND a.ended_at IS NULL)`,
  },
  {
    name: 'claims counts the attempt rows, numbered 1..claims',
    sql: `SELECT t.endpoint_id, t.id, t.claims, count(a.seq) AS rows, max(a.seq) AS last FROM todos t
          LEFT JOIN todo_attempts a ON a.endpoint_id = t.endpoint_id AND a.todo_id = t.id
          GROUP BY t.endpoint_id, t.id, t.claims
          HAVING count(a.seq) <> t.claims OR coalesce(max(a.seq), 0) <> t.claims`,
  },
  {
    name: 'a claimed todo is held by a session of its own endpoint',
    sql: `SELECT t.endpoint_id, t.id, t.owner_session_id FROM todos t
          WHERE t.state = 'claimed' AND NOT t.synthetic AND NOT EXISTS (
            SELECT 1 FROM mcp_sessions s WHERE s.endpoint_id = t.endpoint_id AND s.id = t.owner_session_id)`,
  },
  {
    // docs/design/ask-human.md: a todo is waiting on a human exactly while its question is open.
    name: 'a todo waiting on a human has one open question, no lease, no owner and no ready_at',
    sql: `SELECT t.endpoint_id, t.id FROM todos t
          WHERE t.state = 'waiting_on_human' AND (t.lease_expires_at IS NOT NULL OR t.owner_session_id IS NOT NULL
            OR t.ready_at IS NOT NULL OR (SELECT count(*) FROM todo_asks q
              WHERE q.endpoint_id = t.endpoint_id AND q.todo_id = t.id AND q.ended_at IS NULL) <> 1)`,
  },
  {
    name: 'an open question belongs to a todo waiting on a human (never to one in another state)',
    sql: `SELECT q.endpoint_id, q.todo_id, t.state FROM todo_asks q
          JOIN todos t ON t.endpoint_id = q.endpoint_id AND t.id = q.todo_id
          WHERE q.ended_at IS NULL AND t.state <> 'waiting_on_human'`,
  },
  {
    name: 'every question was asked by an attempt that ended asked, and an answer names who and how',
    sql: `SELECT q.endpoint_id, q.todo_id, q.seq FROM todo_asks q
          LEFT JOIN todo_attempts a ON a.endpoint_id = q.endpoint_id AND a.todo_id = q.todo_id AND a.seq = q.seq
          WHERE (a.seq IS NOT NULL AND a.outcome IS DISTINCT FROM 'asked')
             OR (q.outcome = 'answered' AND (q.answered_by IS NULL OR (q.answer_text IS NULL) = (q.answer_choice IS NULL)))`,
  },
  {
    name: 'a done todo has completed_at',
    sql: `SELECT endpoint_id, id FROM todos WHERE state = 'done' AND completed_at IS NULL`,
  },
  {
    name: 'a pending todo is findable by the claim paths (ready_at set) unless scheduled (not_before set)',
    sql: `SELECT endpoint_id, id FROM todos
          WHERE state = 'pending' AND NOT synthetic AND ready_at IS NULL AND not_before IS NULL`,
  },
  {
    name: 'a finished todo is never ready again (done, canceled, dead-lettered)',
    sql: `SELECT endpoint_id, id, state FROM todos
          WHERE ready_at IS NOT NULL
            AND (state IN ('done', 'canceled') OR (state = 'failed' AND next_retry_at IS NULL))`,
  },
  {
    name: 'a todo was created by its own endpoint or by its owner',
    sql: `SELECT t.endpoint_id, t.id, t.created_by_human_id, t.created_by_endpoint_id FROM todos t
          JOIN endpoints e ON e.id = t.endpoint_id
          WHERE (t.created_by_endpoint_id IS NOT NULL AND t.created_by_endpoint_id <> t.endpoint_id)
             OR (t.created_by_human_id IS NOT NULL AND t.created_by_human_id <> e.human_id)`,
  },
  {
    name: 'an attempt belongs to a session of its own endpoint',
    sql: `SELECT a.endpoint_id, a.todo_id, a.seq, a.session_id FROM todo_attempts a
          JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
          WHERE a.session_id IS NOT NULL AND NOT t.synthetic AND NOT EXISTS (
            SELECT 1 FROM mcp_sessions s WHERE s.endpoint_id = a.endpoint_id AND s.id = a.session_id)`,
  },
  {
    // Claims charged to a window were committed between its start and its last charge
    // (the window row's updated_at, the charging claim's own now()). Not the policy's
    // period: a policy changed from a day to an hour after charging left a day's window.
    name: 'an admission window never charged more claims than were committed in it',
    sql: `SELECT w.policy_id, w.window_start, w.updated_at, w.used, (
              SELECT count(*) FROM todo_attempts a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
              WHERE a.endpoint_id = p.endpoint_id AND t.queue = p.queue
                AND a.claimed_at >= w.window_start AND a.claimed_at <= w.updated_at) AS attempts
          FROM admission_windows w JOIN admission_policies p ON p.id = w.policy_id
          WHERE w.used > (
              SELECT count(*) FROM todo_attempts a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
              WHERE a.endpoint_id = p.endpoint_id AND t.queue = p.queue
                AND a.claimed_at >= w.window_start AND a.claimed_at <= w.updated_at)`,
  },
  {
    name: 'an admission window of an unchanged policy is within its budget',
    sql: `SELECT w.policy_id, w.window_start, w.used, p.max_claims_per_window FROM admission_windows w
          JOIN admission_policies p ON p.id = w.policy_id
          WHERE p.updated_at <= w.window_start AND p.max_claims_per_window IS NOT NULL
            AND w.used > p.max_claims_per_window`,
  },
  {
    name: 'claims in flight are within max_in_flight (unless they predate the policy)',
    sql: `SELECT p.endpoint_id, p.queue, p.max_in_flight, count(*) AS in_flight FROM admission_policies p
          JOIN todos t ON t.endpoint_id = p.endpoint_id AND t.queue = p.queue AND t.state = 'claimed'
            AND t.lease_expires_at > now()
          WHERE p.max_in_flight IS NOT NULL
          GROUP BY p.endpoint_id, p.queue, p.max_in_flight, p.updated_at
          HAVING count(*) > p.max_in_flight AND min(t.claimed_at) >= p.updated_at`,
  },
  {
    name: 'at most one message in flight per session',
    sql: `SELECT endpoint_id, session_id, count(*) FROM queued_messages WHERE reserved_in_flight
          GROUP BY endpoint_id, session_id HAVING count(*) > 1`,
  },
  {
    name: 'no message is left in a closed session (the purge)',
    sql: `SELECT m.endpoint_id, m.id, m.session_id FROM queued_messages m
          JOIN mcp_sessions s ON s.endpoint_id = m.endpoint_id AND s.id = m.session_id
          WHERE s.closed_at IS NOT NULL`,
  },
  {
    name: "message positions are unique in a session's queue",
    sql: `SELECT endpoint_id, session_id, position, count(*) FROM queued_messages
          GROUP BY endpoint_id, session_id, position HAVING count(*) > 1`,
  },
  {
    name: "a message is of its session's current generation",
    sql: `SELECT m.endpoint_id, m.id, m.generation, l.generation AS current FROM queued_messages m
          LEFT JOIN queue_session_locks l ON l.endpoint_id = m.endpoint_id AND l.session_id = m.session_id
          WHERE m.generation <> coalesce(l.generation, 0)`,
  },
  {
    name: "a message's sender is its session owner (user, workflow) or one of the owner's endpoints (agent)",
    sql: `SELECT m.endpoint_id, m.id, m.queued_by, m.sender_id FROM queued_messages m
          JOIN endpoints e ON e.id = m.endpoint_id
          WHERE (m.queued_by = 'user' AND m.sender_id <> e.human_id)
             OR (m.queued_by = 'agent' AND NOT EXISTS (
                  SELECT 1 FROM endpoints s WHERE s.id = m.sender_id AND s.human_id = e.human_id))
             OR (m.queued_by = 'workflow' AND NOT EXISTS (
                  SELECT 1 FROM api_tokens k WHERE k.id = m.sender_id AND k.human_id = e.human_id
                    AND k.kind = 'workflow'))`,
  },
  {
    name: "an endpoint's notify_hooks_used counts its hooks, at most 5",
    sql: `SELECT e.id, e.notify_hooks_used, count(h.id) AS hooks FROM endpoints e
          LEFT JOIN notify_hooks h ON h.endpoint_id = e.id
          GROUP BY e.id, e.notify_hooks_used HAVING e.notify_hooks_used <> count(h.id) OR count(h.id) > 5`,
  },
  {
    name: 'a revoked endpoint has no live session',
    sql: `SELECT e.id, s.id AS session_id FROM endpoints e JOIN mcp_sessions s ON s.endpoint_id = e.id
          WHERE e.revoked_at IS NOT NULL AND s.closed_at IS NULL`,
  },
  {
    name: 'at most one outstanding doorbell test per endpoint',
    sql: `SELECT endpoint_id, count(*) FROM doorbell_tests WHERE report IS NULL
          GROUP BY endpoint_id HAVING count(*) > 1`,
  },
];

/** Every CHECK constraint of the schema as a query for the rows that violate it. */
async function checkConstraints(pool: Pool): Promise<Invariant[]> {
  const res = await pool.query<{ table: string; name: string; def: string }>(
    `SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS def
     FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
     WHERE c.contype = 'c' AND n.nspname = 'public' ORDER BY 1, 2`,
  );
  return res.rows.map((r) => {
    const expr = /^CHECK \((.*)\)( NOT VALID)?$/s.exec(r.def)?.[1] ?? 'false';
    // NULL passes a CHECK, so only a definite false violates it.
    return { name: `CHECK ${r.table}.${r.name}`, sql: `SELECT * FROM ${r.table} WHERE (${expr}) IS FALSE LIMIT 5` };
  });
}

/** The invariants that do not hold, each with up to 5 offending rows. */
export async function violations(pool: Pool): Promise<{ name: string; rows: unknown[] }[]> {
  const checks = [...(await checkConstraints(pool)), ...INVARIANTS];
  const out: { name: string; rows: unknown[] }[] = [];
  for (const check of checks) {
    const res = await pool.query(check.sql);
    if (res.rows.length > 0) out.push({ name: check.name, rows: res.rows.slice(0, 5) });
  }
  return out;
}

/** How many CHECK constraints and named invariants a run verifies (shown in the log). */
export async function invariantCount(pool: Pool): Promise<number> {
  return (await checkConstraints(pool)).length + INVARIANTS.length;
}
