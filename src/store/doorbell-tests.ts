// Doorbell self-tests (doorbell_tests, docs/design/doorbell-acknowledgement.md) and the
// synthetic todo each one rings for. The synthetic todo is the only todo the normal paths
// never see: it is created with ready_at NULL and every claim, listing and sweep
// statement says NOT synthetic; the self-test opts in here, by id, with
// claimSyntheticById. Every statement names the endpoint, so another endpoint's test or
// todo is never found.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import type { Todo } from '../domain/todo.js';
import type { PruneArgs } from './retention.js';
import { TODO_COLUMNS, todoColumnsOf } from './todo-sql.js';

export interface DoorbellTestRow {
  endpoint_id: string;
  id: string;
  todo_id: string;
  ring_id: string | null;
  wait_seconds: number;
  started_at: Date;
  expires_at: Date;
  report: Record<string, unknown> | null;
  started_via: 'mcp' | 'api';
  session_id: string | null;
  /** Read time: the deadline has passed (by the database clock). */
  expired?: boolean;
}

const TEST_COLUMNS =
  'endpoint_id, id, todo_id, ring_id, wait_seconds, started_at, expires_at, report, started_via, session_id';

/** Serialises test starts of one endpoint, so the outstanding and hourly checks are exact. */
export async function lockEndpointTests(tx: Queryable, endpointId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('doorbell_tests:' || $1))`, [endpointId]);
}

/** The endpoint's outstanding test (no report yet), if any, and how many started in the last hour. */
export async function testQuota(
  tx: Queryable,
  endpointId: string,
): Promise<{ outstanding: DoorbellTestRow | null; last_hour: number }> {
  const res = await tx.query<DoorbellTestRow & { last_hour: number }>(
    `SELECT ${TEST_COLUMNS}, (expires_at <= now()) AS expired,
            (SELECT count(*) FROM doorbell_tests h
              WHERE h.endpoint_id = $1 AND h.started_at > now() - interval '1 hour') AS last_hour
       FROM (SELECT 1) one LEFT JOIN doorbell_tests ON endpoint_id = $1 AND report IS NULL`,
    [endpointId],
  );
  const row = res.rows[0];
  if (!row) return { outstanding: null, last_hour: 0 };
  const { last_hour, ...test } = row;
  return { outstanding: test.id ? test : null, last_hour };
}

/** Tells every instance a test started, so one of them rings it after the delay (on commit). */
export async function announceTest(tx: Queryable, endpointId: string, testId: string): Promise<void> {
  await tx.query(`SELECT ${notifySql('doorbell_test', { endpoint_id: '$1::text', test_id: '$2::text' })}`, [
    endpointId,
    testId,
  ]);
}

export interface StartTestArgs {
  endpointId: string;
  testId: string;
  todoId: string;
  queue: string;
  waitSeconds: number;
  ringDelayMs: number;
  startedVia: 'mcp' | 'api';
  sessionId: string | null;
  createdByHumanId: string | null;
  createdByEndpointId: string | null;
}

/** The synthetic todo (never ready: ready_at NULL) and its test row, in one statement. */
export async function insertTest(tx: Queryable, a: StartTestArgs): Promise<DoorbellTestRow> {
  const res = await tx.query<DoorbellTestRow>(
    `WITH todo AS (
       INSERT INTO todos (endpoint_id, id, queue, title, body, kind, source, created_by_human_id,
                          created_by_endpoint_id, max_attempts, synthetic, ready_at)
       VALUES ($1, $3, $4, 'Doorbell self-test: no work needed', '', 'doorbell_test', 'doorbell_test', $8, $9, 1,
               true, NULL)
       RETURNING id)
     INSERT INTO doorbell_tests (endpoint_id, id, todo_id, wait_seconds, started_at, expires_at, started_via, session_id)
     SELECT $1, $2, todo.id, $5::int, now(), now() + make_interval(secs => $5::int + $10::int / 1000.0), $6, $7
       FROM todo
     RETURNING ${TEST_COLUMNS}`,
    [
      a.endpointId,
      a.testId,
      a.todoId,
      a.queue,
      a.waitSeconds,
      a.startedVia,
      a.sessionId,
      a.createdByHumanId,
      a.createdByEndpointId,
      a.ringDelayMs,
    ],
  );
  return res.rows[0] as DoorbellTestRow;
}

export async function getTest(db: Queryable, endpointId: string, id: string): Promise<DoorbellTestRow | null> {
  const res = await db.query<DoorbellTestRow>(
    `SELECT ${TEST_COLUMNS}, (expires_at <= now()) AS expired FROM doorbell_tests WHERE endpoint_id = $1 AND id = $2`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}

export interface TestRingTarget {
  todo_id: string;
  queue: string;
  title: string;
  /**
   * The session to ring: the test's own, else the endpoint's session that declared
   * claude/channel and holds a stream, rung longest ago.
   */
  session_id: string | null;
  instance: string | null;
  stream_open: boolean | null;
  /** Its initialize declared claude/channel: only such a session is rung. */
  channel: boolean | null;
}

/**
 * Takes the test's one ring (exactly once across instances: ring_id is set only while
 * NULL) and picks the session to ring. Null when it was taken already or the test is over.
 */
export async function takeTestRing(
  db: Queryable,
  a: { endpointId: string; testId: string; ringId: string },
): Promise<TestRingTarget | null> {
  const res = await db.query<TestRingTarget>(
    `WITH t AS (
       UPDATE doorbell_tests SET ring_id = $3
        WHERE endpoint_id = $1 AND id = $2 AND ring_id IS NULL AND report IS NULL
       RETURNING endpoint_id, todo_id, session_id),
     target AS (
       SELECT s.id, s.instance, s.stream_open, s.channel FROM mcp_sessions s, t
        WHERE s.endpoint_id = t.endpoint_id AND s.closed_at IS NULL AND (t.session_id IS NULL OR s.id = t.session_id)
        ORDER BY s.channel DESC, s.stream_open DESC, s.last_rung_at NULLS FIRST, s.created_at, s.id LIMIT 1),
     touched AS (
       UPDATE mcp_sessions s SET last_rung_at = now() FROM target
        WHERE s.endpoint_id = $1 AND s.id = target.id AND target.stream_open AND target.channel)
     SELECT t.todo_id, td.queue, td.title, target.id AS session_id, target.instance, target.stream_open,
            target.channel
       FROM t JOIN todos td ON td.endpoint_id = t.endpoint_id AND td.id = t.todo_id
       LEFT JOIN target ON true`,
    [a.endpointId, a.testId, a.ringId],
  );
  return res.rows[0] ?? null;
}

/** Freezes a report once: false when another path (claim, expiry, failed ring) froze it first. */
export async function freezeReport(
  db: Queryable,
  a: { endpointId: string; testId: string; report: Record<string, unknown> },
): Promise<boolean> {
  const res = await db.query(
    `UPDATE doorbell_tests SET report = $3::jsonb WHERE endpoint_id = $1 AND id = $2 AND report IS NULL`,
    [a.endpointId, a.testId, JSON.stringify(a.report)],
  );
  return (res.rowCount ?? 0) > 0;
}

/** Rewrites a `pass` report (its ring row landed after the claim froze it): nothing else is ever rewritten. */
export async function completePassReport(
  db: Queryable,
  a: { endpointId: string; testId: string; report: Record<string, unknown> },
): Promise<boolean> {
  const res = await db.query(
    `UPDATE doorbell_tests SET report = $3::jsonb
      WHERE endpoint_id = $1 AND id = $2 AND report->>'verdict' = 'pass' AND report->'delivered'->>'at' IS NULL`,
    [a.endpointId, a.testId, JSON.stringify(a.report)],
  );
  return (res.rowCount ?? 0) > 0;
}

/** The outstanding test a synthetic todo belongs to, locked for the claim's freeze. */
export async function testOfTodo(tx: Queryable, endpointId: string, todoId: string): Promise<DoorbellTestRow | null> {
  const res = await tx.query<DoorbellTestRow>(
    `SELECT ${TEST_COLUMNS}, (expires_at <= now()) AS expired FROM doorbell_tests
      WHERE endpoint_id = $1 AND todo_id = $2 FOR UPDATE`,
    [endpointId, todoId],
  );
  return res.rows[0] ?? null;
}

/**
 * The self-test's claim (ClaimSyntheticByID): a pending synthetic todo of this endpoint,
 * on a granted queue, is claimed and completed at once with `result`; its attempt opens
 * and closes as completed. Null when there is no such todo for this caller.
 */
export async function claimSyntheticById(
  tx: Queryable,
  a: { endpointId: string; queues: string[]; sessionId: string; id: string; result: unknown },
): Promise<Todo | null> {
  const res = await tx.query<Todo>(
    `WITH done AS (
       UPDATE todos t SET state = 'done', owner_session_id = $4, attempt = t.attempt + 1, claims = t.claims + 1,
         claimed_at = now(), completed_at = now(), result = $5::jsonb, lease_expires_at = NULL, ready_at = NULL,
         updated_at = now()
        WHERE t.endpoint_id = $1 AND t.id = $3 AND t.synthetic AND t.state = 'pending' AND t.queue = ANY($2::text[])
       RETURNING ${todoColumnsOf('t')}),
     attempt AS (
       INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at,
                                  ended_at, outcome)
       SELECT endpoint_id, id, claims, attempt, owner_session_id, claimed_at, now(), now(), 'completed' FROM done)
     SELECT * FROM done`,
    [a.endpointId, a.queues, a.id, a.sessionId, JSON.stringify(a.result)],
  );
  return res.rows[0] ?? null;
}

/** Outstanding tests whose ring is overdue (the instance that started one went away). */
export async function testsDueRing(
  db: Queryable,
  ringDelayMs: number,
  limit: number,
): Promise<Array<{ endpoint_id: string; id: string }>> {
  const res = await db.query<{ endpoint_id: string; id: string }>(
    `SELECT endpoint_id, id FROM doorbell_tests
      WHERE report IS NULL AND ring_id IS NULL AND started_at <= now() - make_interval(secs => $1 / 1000.0)
      ORDER BY started_at LIMIT $2`,
    [ringDelayMs * 2, limit],
  );
  return res.rows;
}

/** Outstanding tests past their deadline, to be frozen. */
export async function expiredTests(db: Queryable, limit: number): Promise<Array<{ endpoint_id: string; id: string }>> {
  const res = await db.query<{ endpoint_id: string; id: string }>(
    `SELECT endpoint_id, id FROM doorbell_tests WHERE report IS NULL AND expires_at <= now()
      ORDER BY expires_at LIMIT $1`,
    [limit],
  );
  return res.rows;
}

/**
 * Deletes one batch of synthetic todos whose test has expired (or whose test is gone: an
 * interrupted start). Returns how many.
 */
export async function cleanupSynthetic(db: Queryable, limit: number): Promise<number> {
  const res = await db.query(
    `DELETE FROM todos t USING (
       SELECT t.endpoint_id, t.id FROM todos t
        WHERE t.synthetic AND NOT EXISTS (
          SELECT 1 FROM doorbell_tests d
           WHERE d.endpoint_id = t.endpoint_id AND d.todo_id = t.id AND d.expires_at > now())
        ORDER BY t.created_at LIMIT $1) old
      WHERE t.endpoint_id = old.endpoint_id AND t.id = old.id`,
    [limit],
  );
  return res.rowCount ?? 0;
}

/**
 * Deletes one batch of finished self-tests (report frozen) started before the cutoff,
 * oldest first through idx_doorbell_tests_reported; an outstanding test is never deleted.
 */
export async function pruneReports(db: Queryable, a: PruneArgs): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT endpoint_id, id FROM doorbell_tests
        WHERE report IS NOT NULL AND started_at < now() - make_interval(secs => $1)
        ORDER BY started_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM doorbell_tests d USING old WHERE d.endpoint_id = old.endpoint_id AND d.id = old.id`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}

/** Whether `id` is a pending synthetic todo of this endpoint: one read before the self-test's claim transaction. */
export async function isPendingSynthetic(db: Queryable, endpointId: string, id: string): Promise<boolean> {
  const res = await db.query(
    `SELECT 1 FROM todos WHERE endpoint_id = $1 AND id = $2 AND synthetic AND state = 'pending'`,
    [endpointId, id],
  );
  return (res.rowCount ?? 0) > 0;
}

/** A synthetic todo of this endpoint by id, for the self-test's own reads. */
export async function getSyntheticTodo(db: Queryable, endpointId: string, id: string): Promise<Todo | null> {
  const res = await db.query<Todo>(
    `SELECT ${TODO_COLUMNS} FROM todos WHERE endpoint_id = $1 AND id = $2 AND synthetic`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}
