// Pins the scale rule (docs/design/scale.md) on plans: with 200,000 pending todos (each with
// an open ring) and 200,000 done ones, every statement of the claim path, the doorbell
// passes, the reaper, the retry requeue, retention, the dead-instance sweep, admission's
// deferred summary, the board's lanes and charts, the queue rollup sample and the metrics
// collectors reads todos, todo_attempts and doorbell_rings through an index — no
// sequential scan of them; the idle-session sweep, the open at the session cap and the
// waiting mark read mcp_sessions through one too, beside 20,000 closed sessions. Each
// statement is captured as the store issues it (text and parameters) and EXPLAINed with
// those parameters; and every statement that runs, those inside SQL functions included,
// is checked under a forced generic plan (auto_explain), as a cached plan ends up. A
// failure prints the plan.
//
// A second endpoint holds the shape a push through the product leaves (docs/design/scale.md,
// "A pushed backlog"): 200,000 pending todos rung seconds ago to the live streams of 16
// sessions, every ring still open (neither acknowledged nor judged unheard), each session
// stamped with an unanswered ring, and claims in flight under lease tokens. The claim and
// settle paths, by session and by lease token, and every ring pass are checked there too.

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type pg from 'pg';
import type { Queryable } from '../../src/db/pool.js';
import { MAX_RINGS, RERING_SCHEDULE_SECONDS } from '../../src/doorbell/pump.js';
import { admitNext } from '../../src/todos/claim-loop.js';
import { allPolicyStates, heldPolicyOf, pendingByQueue, policyStates } from '../../src/store/admission.js';
import { laneCards, laneCounts, liveFingerprint } from '../../src/store/board-lanes.js';
import { claimById, claimNext, complete, fail, heartbeat, release } from '../../src/store/claims.js';
import { completeMany, failMany, heartbeatMany, releaseMany } from '../../src/store/settles-batch.js';
import { countUnheardSessions, markUnheardRings, pruneRings } from '../../src/store/doorbell-rings.js';
import { reapDeadInstances } from '../../src/store/instances.js';
import { claimReadyTransitions, queuesWithUndecided } from '../../src/store/notify-hooks.js';
import { claimDigest, claimDigestTarget, pendingCount } from '../../src/store/presence.js';
import { oldestPendingAges, queueStateCounts } from '../../src/store/queue-stats.js';
import { oldestReadyOf, rollupBuckets, sampleQueueRollups } from '../../src/store/queue-rollups.js';
import { answerRing } from '../../src/store/ring-targets.js';
import { claimRings, endpointsWithOpenStreams } from '../../src/store/rings.js';
import { closeIdleSessions, closeSession, insertSessionUnderCap, markWaiting } from '../../src/store/sessions.js';
import { foldTodoCounts, stateCounts } from '../../src/store/todo-counts.js';
import { msUntilNextDue, promoteDue } from '../../src/store/todo-schedule.js';
import { findTodos, type FindTodosArgs } from '../../src/store/todo-find.js';
import { listTodos } from '../../src/store/todos.js';
import { pruneTerminal, reapExpired, requeueDueRetries } from '../../src/store/todo-sweeps.js';
import { testDatabase, type TestDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';

const PENDING = 200_000;
const CLOSED_SESSIONS = 20_000;
const DONE = 200_000;
const FRESH = 200_000;
const FRESH_SESSIONS = 16;
const WATCHED = new Set(['todos', 'todo_attempts', 'doorbell_rings']);

const db: TestDatabase = await testDatabase('scale_plans');
let endpointId = '';
let freshId = '';

before(async () => {
  const e = await makeEndpoint(db.pool, { queues: ['inbox', 'budgeted'] });
  endpointId = e.id;
  // A backlog rung once through an instance that has since died (1 in 100 never rung), a
  // history of done work, a third of it past retention, a few claims (some lapsed) and
  // retries (some due).
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, ready_at, ring_attempts,
                        last_ringed_at, last_rung_instance, created_at, updated_at)
     SELECT $1, 'td_p' || lpad(g::text, 8, '0'), CASE WHEN g % 10 = 0 THEN 'budgeted' ELSE 'inbox' END, 'backlog',
            $2, 'pending', now() - interval '3 days' + g * interval '1 second', CASE WHEN g % 100 = 0 THEN 0 ELSE 1 END,
            CASE WHEN g % 100 <> 0 THEN now() - interval '3 days' + g * interval '1 second' + interval '1 second' END,
            CASE WHEN g % 100 <> 0 THEN 'i-dead' END, now() - interval '3 days' + g * interval '1 second',
            now() - interval '3 days' + g * interval '1 second'
       FROM generate_series(1, $3::int) g`,
    [endpointId, e.human_id, PENDING],
  );
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, attempt, claims, completed_at,
                        created_at, updated_at)
     SELECT $1, 'td_d' || lpad(g::text, 8, '0'), 'inbox', 'history', $2, 'done', 1, 1,
            now() - g * interval '40 seconds', now() - g * interval '40 seconds', now() - g * interval '40 seconds'
       FROM generate_series(1, $3::int) g`,
    [endpointId, e.human_id, DONE],
  );
  await db.pool.query(
    `INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at, ended_at,
                                outcome)
     SELECT endpoint_id, id, 1, 1, 'ms_old', created_at, created_at + interval '5 minutes', updated_at, 'completed'
       FROM todos WHERE state = 'done'`,
  );
  await db.pool.query(
    `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at, acked_at, ack_via)
     SELECT endpoint_id, 'rg_' || id, 'ms_old', id, 'todo', queue, created_at, created_at, 'claim'
       FROM todos WHERE state = 'done'`,
  );
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, attempt, claims, owner_session_id,
                        lease_expires_at, ready_at, next_retry_at)
     SELECT $1, 'td_c' || g, 'inbox', 'in flight', $2, CASE WHEN g % 2 = 0 THEN 'claimed' ELSE 'failed' END, 1, 1,
            CASE WHEN g % 2 = 0 THEN 'ms_live' END,
            CASE WHEN g % 2 = 0 THEN now() + (g - 10) * interval '1 minute' END,
            now() + (g - 10) * interval '1 minute',
            CASE WHEN g % 2 = 1 THEN now() + (g - 10) * interval '1 minute' END
       FROM generate_series(1, 20) g`,
    [endpointId, e.human_id],
  );
  // Every pending todo was rung once and never claimed: its ring is still open (half of
  // them judged unheard), as in a backlog an agent has not reached.
  await db.pool.query(
    `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at, unheard_at)
     SELECT endpoint_id, 'rg_' || id, 'ms_old', id, 'todo', queue, last_ringed_at,
            CASE WHEN ring_attempts % 2 = 0 THEN last_ringed_at + interval '15 minutes' END
       FROM todos WHERE state = 'pending' AND last_ringed_at IS NOT NULL`,
  );
  // Scheduled todos (0014): pending, not ready before their not_before, some due.
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, not_before, ready_at)
     SELECT $1, 'td_s' || g, 'inbox', 'scheduled', $2, now() + (g - 5) * interval '1 minute', NULL
       FROM generate_series(1, 50) g`,
    [endpointId, e.human_id],
  );
  await db.pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, instance, stream_open, channel) VALUES ($1, 'ms_live', 'i-live', true, true)`,
    [endpointId],
  );
  await db.pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, instance, last_seen_at, created_at, closed_at)
     SELECT $1, 'ms_closed' || g, 'i-live', now() - g * interval '30 seconds', now() - g * interval '30 seconds',
            now() - g * interval '30 seconds'
       FROM generate_series(1, $2::int) g`,
    [endpointId, CLOSED_SESSIONS],
  );
  await db.pool.query(`INSERT INTO instances (id, host, pid, version, last_beat_at)
                       VALUES ('i-dead', 'h', 1, 'v', now() - interval '1 hour')`);
  await db.pool.query(
    `INSERT INTO admission_policies (endpoint_id, queue, max_in_flight, created_by_human_id, updated_by_human_id,
                                     held_at)
     VALUES ($1, 'budgeted', 1, $2, $2, now())`,
    [endpointId, e.human_id],
  );
  await db.pool.query(`INSERT INTO notify_hooks (endpoint_id, id, url, secret) VALUES ($1, 'nh_1', 'https://x', 's')`, [
    endpointId,
  ]);
  await seedFresh();
  await foldTodoCounts(db.pool);
  await db.pool.query('ANALYZE');
});

/** The fresh-ring endpoint: a backlog pushed minutes ago, every todo's ring still open. */
async function seedFresh(): Promise<void> {
  const e = await makeEndpoint(db.pool, { queues: ['inbox'] });
  freshId = e.id;
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, ready_at, ring_attempts,
                        last_ringed_at, last_rung_instance, last_rung_stream, created_at, updated_at)
     SELECT $1, 'td_f' || lpad(g::text, 8, '0'), 'inbox', 'pushed', $2, 'pending', at, 1, at + interval '5 milliseconds',
            'i-live', 'st_fresh' || (g % $4::int), at, at
       FROM (SELECT g, now() - interval '10 minutes' + g * interval '2 milliseconds' AS at
               FROM generate_series(1, $3::int) g) x`,
    [freshId, e.human_id, FRESH, FRESH_SESSIONS],
  );
  await db.pool.query(
    `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at)
     SELECT endpoint_id, 'rg_' || id, 'ms_fresh' || right(last_rung_stream, -8), id, 'todo', queue, last_ringed_at
       FROM todos WHERE endpoint_id = $1 AND state = 'pending'`,
    [freshId],
  );
  await db.pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, instance, stream_open, channel, stream_id, last_rung_at, ring_todo_id,
                               ring_claims)
     SELECT $1, 'ms_fresh' || g, 'i-live', true, true, 'st_fresh' || g, now(), 'td_f' || lpad((g + 1)::text, 8, '0'), 0
       FROM generate_series(0, $2::int - 1) g`,
    [freshId, FRESH_SESSIONS],
  );
  // Claims in flight: odd ones settled by lease token (lt_fresh<g>), even ones by session.
  await db.pool.query(
    `WITH c AS (
       INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, attempt, claims, owner_session_id,
                          lease_expires_at, ready_at)
       SELECT $1, 'td_fc' || g, 'inbox', 'in flight', $2, 'claimed', 1, 1, 'ms_fresh0', now() + interval '5 minutes',
              now() - interval '1 minute'
         FROM generate_series(1, 20) g
       RETURNING endpoint_id, id)
     INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at,
                                lease_token_hash)
     SELECT endpoint_id, id, 1, 1, 'ms_fresh0', now(), now() + interval '5 minutes',
            sha256(convert_to('lt_fresh' || right(id, -5), 'UTF8'))
       FROM c`,
    [freshId, e.human_id],
  );
}

interface Captured {
  text: string;
  values: unknown[];
  /** A named (prepared) statement: PostgreSQL caches its plan, generic after a few runs. */
  named: boolean;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** A plan PostgreSQL chose while running the statements, top-level or inside a function. */
interface RunPlan {
  query: string;
  plan: PlanNode;
}

/**
 * Runs fn in a transaction that is rolled back, capturing every statement it sends and,
 * through auto_explain (nested statements, plans sent as notices), the plan of every
 * statement that ran, those inside SQL and PL/pgSQL functions included. Generic plans are
 * forced, as a cached plan (a named statement, a function's statement) ends up generic.
 */
async function capture(fn: (q: Queryable) => Promise<unknown>): Promise<{ sent: Captured[]; ran: RunPlan[] }> {
  const client = await db.pool.connect();
  const sent: Captured[] = [];
  const ran: RunPlan[] = [];
  const onNotice = (msg: { message?: string }) => {
    const json = /plan:\s*(\{[\s\S]*\})\s*$/.exec(msg.message ?? '')?.[1];
    if (!json) return;
    const explained = JSON.parse(json) as { 'Query Text': string; Plan: PlanNode };
    ran.push({ query: explained['Query Text'], plan: explained.Plan });
  };
  const recorder = {
    query: (config: string | pg.QueryConfig, values?: unknown[]) => {
      if (typeof config === 'string') {
        sent.push({ text: config, values: values ?? [], named: false });
        return client.query(config, values);
      }
      sent.push({ text: config.text, values: config.values ?? [], named: config.name !== undefined });
      return client.query(config);
    },
  } as unknown as Queryable;
  try {
    await client.query('BEGIN');
    await client.query(`LOAD 'auto_explain'`);
    for (const setting of [
      'auto_explain.log_min_duration = 0',
      'auto_explain.log_nested_statements = on',
      'auto_explain.log_level = notice',
      'auto_explain.log_format = json',
      'plan_cache_mode = force_generic_plan',
      'client_min_messages = notice',
    ]) {
      await client.query(`SET LOCAL ${setting}`);
    }
    client.on('notice', onNotice);
    await fn(recorder);
  } finally {
    client.off('notice', onNotice);
    await client.query('ROLLBACK');
    client.release();
  }
  return { sent, ran };
}

function seqScans(node: PlanNode, watched: ReadonlySet<string>): string[] {
  const here =
    node['Node Type'] === 'Seq Scan' && watched.has(node['Relation Name'] ?? '') ? [node['Relation Name']!] : [];
  return [...here, ...(node.Plans ?? []).flatMap((n) => seqScans(n, watched))];
}

/**
 * Fails when a statement fn sends plans a sequential scan of a watched table, as EXPLAIN
 * plans it with its parameters, or when a statement whose plan is cached — a named one, or
 * one inside a function — ran with one under a generic plan. (An unnamed statement is
 * planned afresh with its parameters on every run, as EXPLAIN plans it.)
 */
async function assertIndexed(
  name: string,
  fn: (q: Queryable) => Promise<unknown>,
  watched: ReadonlySet<string> = WATCHED,
): Promise<void> {
  const { sent, ran } = await capture(fn);
  assert.ok(sent.length > 0, `${name} sent no statement`);
  for (const s of sent) {
    const res = await db.pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) ${s.text}`,
      s.values,
    );
    const scans = seqScans(res.rows[0]!['QUERY PLAN'][0]!.Plan, watched);
    if (scans.length > 0) {
      const text = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${s.text}`, s.values);
      assert.fail(
        `${name}: sequential scan of ${scans.join(', ')} in\n${s.text}\n\n${text.rows.map((r) => r['QUERY PLAN']).join('\n')}`,
      );
    }
  }
  const unnamed = new Set(sent.filter((x) => !x.named).map((x) => x.text.trim()));
  for (const r of ran.filter((x) => !unnamed.has(x.query.trim()))) {
    const scans = seqScans(r.plan, watched);
    if (scans.length > 0) {
      assert.fail(
        `${name}: a generic plan scans ${scans.join(', ')} in\n${r.query}\n\n${JSON.stringify(r.plan, null, 1)}`,
      );
    }
  }
}

const reasons = () =>
  [
    { kind: 'ready', queue: 'inbox' },
    { kind: 'reopen', queue: 'inbox' },
    { kind: 'attach', sessionId: 'ms_live' },
    { kind: 'rering', scheduleSeconds: RERING_SCHEDULE_SECONDS },
    { kind: 'waiting' },
    { kind: 'waiting', sessionId: 'ms_live' },
  ] as const;

for (const reason of reasons()) {
  test(`the doorbell's ${reason.kind}${'sessionId' in reason ? ` (${reason.sessionId})` : ''} ring pass reads through indexes`, () =>
    assertIndexed(`claimRings ${reason.kind}`, (q) =>
      claimRings(q, { endpointId, maxRings: 6, limit: 16, reason, deferredQueues: ['budgeted'] }),
    ));
}

const claimArgs = () => ({ endpointId, sessionId: 'ms_live', leaseSeconds: 300 });
const owned = (id: string) => ({ endpointId, id, sessionId: 'ms_live' });

/** findTodos's arguments with no filter but `over` (read when the test runs: endpointId is set by then). */
const find = (over: Partial<FindTodosArgs>): FindTodosArgs => ({
  endpointId,
  queue: null,
  state: null,
  kind: null,
  source: null,
  priority: null,
  priorityMin: null,
  createdBefore: null,
  createdAfter: null,
  titleLike: null,
  before: null,
  limit: 51,
  ...over,
});

const statements: Record<string, (q: Queryable) => Promise<unknown>> = {
  'claim_next (one queue, acknowledging the ring)': (q) => claimNext(q, { ...claimArgs(), queues: ['inbox'] }),
  'claim_next over a budgeted queue (probe, then admit)': (q) =>
    admitNext(q, { ...claimArgs(), queues: ['inbox', 'budgeted'] }),
  'claim by id': (q) => claimById(q, { ...claimArgs(), queues: ['inbox'], id: 'td_p00000001' }),
  heartbeat: (q) => heartbeat(q, { ...owned('td_c2'), leaseSeconds: 300 }),
  complete: (q) => complete(q, { ...owned('td_c4'), result: { ok: true } }),
  fail: (q) =>
    fail(q, { ...owned('td_c6'), error: 'x', result: null, backoff: { baseSeconds: 30, maxSeconds: 30 }, jitter: 0 }),
  release: (q) => release(q, owned('td_c8')),
  're-ring endpoints': (q) => endpointsWithOpenStreams(q),
  reaper: (q) => reapExpired(q, 500),
  'retry requeue': (q) => requeueDueRetries(q, 500),
  'todo retention': (q) => pruneTerminal(q, 30 * 86_400, 500),
  'dead-instance sweep': (q) => reapDeadInstances(q, 60_000, 'i-live', 5_000),
  'deferred summary (policy states)': (q) => policyStates(q, endpointId, ['budgeted']),
  'deferred summary (pending by queue)': (q) => pendingByQueue(q, endpointId, ['budgeted', 'inbox']),
  'reopen check': (q) => heldPolicyOf(q, endpointId, 'budgeted'),
  'admission metrics': (q) => allPolicyStates(q, 1000),
  'board lane counts': (q) => laneCounts(q, [endpointId]),
  'board lane cards': (q) =>
    laneCards(
      q,
      [
        { endpointId, queue: 'inbox' },
        { endpointId, queue: 'budgeted' },
      ],
      20,
    ),
  'board fingerprint': (q) => liveFingerprint(q, [endpointId]),
  'metrics queue counts': (q) => queueStateCounts(q),
  'metrics oldest pending': (q) => oldestPendingAges(q),
  'metrics unheard sessions': (q) => countUnheardSessions(q),
  'unheard sweep': (q) => markUnheardRings(q, { windowSeconds: 900, limit: 500 }),
  'ring retention': (q) => pruneRings(q, { olderThanSeconds: 7 * 86_400, limit: 500 }),
  'hook decisions': (q) => claimReadyTransitions(q, { endpointId, queue: 'inbox', limit: 50, maxAgeSeconds: 3600 }),
  'hook sweep': (q) => queuesWithUndecided(q, { limit: 100, minAgeSeconds: 30, maxAgeSeconds: 3600 }),
  'presence digest': async (q) => {
    await q.query(`UPDATE endpoints SET digest_due_at = now(), presence_seen = 'in' WHERE id = $1`, [endpointId]);
    await claimDigest(q, endpointId);
    await claimDigestTarget(q, { endpointId, queues: ['inbox'] });
  },
  'presence pending': (q) => pendingCount(q, endpointId),
  'idle sessions': (q) => closeIdleSessions(q, { idleSeconds: 1800, streamlessSeconds: 300, limit: 500 }),
  // ms_live holds claims: closing it releases them in the same statement.
  'session close': (q) => closeSession(q, endpointId, 'ms_live'),
  'counter fold': (q) => foldTodoCounts(q),
  'queue rollup sample': (q) => sampleQueueRollups(q),
  'queue chart rollups': (q) => rollupBuckets(q, [{ endpointId, queue: 'inbox' }], 86_400, 900),
  'queue chart oldest waiting': (q) =>
    oldestReadyOf(q, [
      { endpointId, queue: 'inbox' },
      { endpointId, queue: 'budgeted' },
    ]),
  // The lists filtered by a state of few rows: failed and canceled read 0031's index,
  // claimed todos_claimed_idx (docs/design/scale.md, "The todo list").
  'todo find, failed': (q) => findTodos(q, find({ state: 'failed' })),
  'todo find, canceled, one queue': (q) => findTodos(q, find({ state: 'canceled', queue: 'inbox' })),
  'todo find, claimed': (q) => findTodos(q, find({ state: 'claimed' })),
  'list_todos, failed': (q) =>
    listTodos(q, endpointId, { queues: ['inbox'], state: 'failed', limit: 50, before: null, includeSynthetic: false }),
  'schedule promotion': (q) => promoteDue(q, 500),
  'next scheduled instant': (q) => msUntilNextDue(q),
};

for (const [name, fn] of Object.entries(statements)) {
  test(`${name} reads through indexes`, () => assertIndexed(name, fn));
}

// The session statements of 0034 also read mcp_sessions through an index: the closed rows
// retention keeps (a week of one-shot clients: CLOSED_SESSIONS of them) are never scanned.
const withSessions = new Set([...WATCHED, 'mcp_sessions']);
const sessionStatements: Record<string, (q: Queryable) => Promise<unknown>> = {
  // ms_live, streamless and idle 10 minutes, holds claims: the claim check reads todos.
  'streamless idle close': async (q) => {
    await q.query(
      `UPDATE mcp_sessions SET stream_open = false, last_seen_at = now() - interval '10 minutes'
                    WHERE endpoint_id = $1 AND id = 'ms_live'`,
      [endpointId],
    );
    await closeIdleSessions(q, { idleSeconds: 1800, streamlessSeconds: 300, limit: 500 });
  },
  // At a cap of two: ms_live is busy (claims, a stream), ms_spare is evicted.
  'session open at the cap': async (q) => {
    await q.query(`INSERT INTO mcp_sessions (endpoint_id, id, instance) VALUES ($1, 'ms_spare', 'i-live')`, [
      endpointId,
    ]);
    const opened = await insertSessionUnderCap(q, {
      endpointId,
      id: 'ms_new',
      clientName: null,
      clientVersion: null,
      instance: 'i-live',
      max: 2,
    });
    assert.equal(opened.evicted, 'ms_spare');
  },
  'waiting call mark': (q) => markWaiting(q, { endpointId, id: 'ms_live', seconds: 30 }),
};

for (const [name, fn] of Object.entries(sessionStatements)) {
  test(`${name} reads through indexes, mcp_sessions included`, () => assertIndexed(name, fn, withSessions));
}

const freshOwned = (id: string) => ({ endpointId: freshId, id, sessionId: 'ms_fresh0' });
/** Settled by lease token from another session of the endpoint, as a one-shot client does. */
const freshToken = (n: number) => ({
  endpointId: freshId,
  id: `td_fc${n}`,
  sessionId: 'ms_fresh9',
  leaseToken: `lt_fresh${n}`,
});
const freshClaim = () => ({ endpointId: freshId, sessionId: 'ms_fresh1', leaseSeconds: 300, queues: ['inbox'] });

const freshStatements: Record<string, (q: Queryable) => Promise<unknown>> = {
  'claim_next (acknowledging an open ring among 200,000)': (q) => claimNext(q, freshClaim()),
  'claim_next through admission': (q) => admitNext(q, freshClaim()),
  'claim by id': (q) => claimById(q, { ...freshClaim(), id: 'td_f00100000' }),
  heartbeat: (q) => heartbeat(q, { ...freshOwned('td_fc2'), leaseSeconds: 300 }),
  complete: (q) => complete(q, { ...freshOwned('td_fc4'), result: { ok: true } }),
  fail: (q) =>
    fail(q, {
      ...freshOwned('td_fc6'),
      error: 'x',
      result: null,
      backoff: { baseSeconds: 30, maxSeconds: 30 },
      jitter: 0,
    }),
  release: (q) => release(q, freshOwned('td_fc8')),
  'heartbeat by lease token': (q) => heartbeat(q, { ...freshToken(1), leaseSeconds: 300 }),
  'complete by lease token': (q) => complete(q, { ...freshToken(3), result: { ok: true } }),
  'fail by lease token': (q) =>
    fail(q, {
      ...freshToken(5),
      error: 'x',
      result: null,
      backoff: { baseSeconds: 30, maxSeconds: 30 },
      jitter: 0,
    }),
  'release by lease token': (q) => release(q, freshToken(7)),
  // The coalesced settles (docs/design/coalescing.md, "Settles"): one statement over calls of
  // both endpoints, by session and by lease token.
  'heartbeat, a batch': (q) =>
    heartbeatMany(
      q,
      [freshOwned('td_fc2'), freshToken(1), owned('td_c2')].map((a) => ({ ...a, leaseSeconds: 300 })),
    ),
  'complete, a batch': (q) =>
    completeMany(
      q,
      [freshOwned('td_fc4'), freshToken(3), owned('td_c4')].map((a) => ({ ...a, result: { ok: true } })),
    ),
  'fail, a batch': (q) =>
    failMany(
      q,
      [freshOwned('td_fc6'), freshToken(5), owned('td_c6')].map((a) => ({
        ...a,
        error: 'x',
        result: null,
        backoff: { baseSeconds: 30, maxSeconds: 30 },
        jitter: 0,
      })),
    ),
  'release, a batch': (q) => releaseMany(q, [freshOwned('td_fc8'), freshToken(7), owned('td_c8')]),
  "a settle's idle check": (q) => answerRing(q, { endpointId: freshId, sessionId: 'ms_fresh0', graceSeconds: 2 }),
  'unheard sweep': (q) => markUnheardRings(q, { windowSeconds: 60, limit: 500 }),
  'session close': (q) => closeSession(q, freshId, 'ms_fresh0'),
};

for (const [name, fn] of Object.entries(freshStatements)) {
  test(`fresh rings: ${name} reads through indexes`, () => assertIndexed(name, fn));
}

for (const reason of [
  ...reasons().filter((r) => !('sessionId' in r)),
  { kind: 'attach', sessionId: 'ms_fresh0' },
  { kind: 'waiting', sessionId: 'ms_fresh0' },
] as const) {
  test(`fresh rings: the doorbell's ${reason.kind} ring pass reads through indexes`, () =>
    assertIndexed(`claimRings ${reason.kind}`, (q) =>
      claimRings(q, { endpointId: freshId, maxRings: 6, limit: 16, reason }),
    ));
}

test('the counters the plans were read with match the rows', async () => {
  const counts = await stateCounts(db.pool, [endpointId]);
  const rows = await db.pool.query<{ queue: string; state: string; n: number }>(
    `SELECT queue, todo_counted_state(state, ready_at) AS state, count(*)::int AS n FROM todos
      WHERE endpoint_id = $1 AND NOT synthetic GROUP BY 1, 2`,
    [endpointId],
  );
  assert.deepEqual(
    counts.map((c) => `${c.queue}/${c.state}=${c.count}`).sort(),
    rows.rows.map((r) => `${r.queue}/${r.state}=${r.n}`).sort(),
  );
});

test('the fresh endpoint holds the pushed shape: every pending todo rung to a live stream, its ring open', async () => {
  const res = await db.pool.query<{ pending: number; open: number; live: number }>(
    `SELECT (SELECT count(*)::int FROM todos WHERE endpoint_id = $1 AND state = 'pending') AS pending,
            (SELECT count(*)::int FROM doorbell_rings WHERE endpoint_id = $1 AND acked_at IS NULL AND unheard_at IS NULL)
              AS open,
            (SELECT count(*)::int FROM todos t JOIN mcp_sessions s ON s.endpoint_id = t.endpoint_id
                AND s.stream_id = t.last_rung_stream AND s.stream_open
              WHERE t.endpoint_id = $1 AND t.state = 'pending') AS live`,
    [freshId],
  );
  assert.deepEqual(res.rows[0], { pending: FRESH, open: FRESH, live: FRESH });
});

test("the ring indexes' literals are the doorbell's ring budget and re-ring schedule", () => {
  // 0012_backlog_scale.sql and store/rings.ts spell `ring_attempts < 6` and `BETWEEN 1 AND 4`:
  // changing either constant needs a migration of those partial indexes.
  assert.equal(MAX_RINGS, 6);
  assert.equal(RERING_SCHEDULE_SECONDS.length, 4);
});

test('the check itself fails on a statement that scans todos', async () => {
  await assert.rejects(
    assertIndexed('a scan', (q) => q.query(`SELECT count(*) FROM todos WHERE title = 'backlog'`)),
    /sequential scan of todos/,
  );
});
