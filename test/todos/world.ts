// Shared set-up for the todo lifecycle tests: one endpoint with two sessions per test,
// and small readers of rows and attempts. Time is moved by back-dating in SQL.

import assert from 'node:assert/strict';
import type { Pool } from '../../src/db/pool.js';
import { AppError, type ErrorCode } from '../../src/domain/errors.js';
import type { Todo } from '../../src/domain/todo.js';

import { createTodo, type Agent, type ClaimNextResult, type TodoDeps } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, depsOf, makeEndpoint } from '../helpers/fixtures.js';

export interface World {
  pool: Pool;
  deps: TodoDeps;
  endpointId: string;
  a: Agent;
  b: Agent;
  create: (input?: Record<string, unknown>) => Promise<{ todo: Todo; created: boolean }>;
}

// Created at the top level so its pool and database live for the whole file.
export const shared = await testDatabase('lifecycle');

/**
 * A fresh endpoint with two sessions. Tests share one database (every verb is scoped by
 * endpoint) unless they run a sweep, which acts across endpoints: those ask for their own.
 */
export async function world(
  label: string,
  options: { ownDatabase?: boolean; defaultLeaseSeconds?: number; serverLeaseSeconds?: number } = {},
): Promise<World> {
  const pool = options.ownDatabase ? (await testDatabase(label)).pool : shared.pool;
  const endpoint = await makeEndpoint(pool, { defaultLeaseSeconds: options.defaultLeaseSeconds });
  const deps = depsOf(pool, options.serverLeaseSeconds);
  return {
    pool,
    deps,
    endpointId: endpoint.id,
    a: agentOf(endpoint, 'session-a'),
    b: agentOf(endpoint, 'session-b'),
    create: (input = {}) =>
      createTodo(
        deps,
        { endpointId: endpoint.id },
        { humanId: endpoint.human_id },
        { queue: 'inbox', title: 'a todo', ...input },
      ),
  };
}

export async function caught(promise: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but the call succeeded`);
}

export function claimed(result: ClaimNextResult): Todo {
  assert.ok('todo' in result, 'expected a claimed todo, got {empty: true}');
  return result.todo;
}

/** Moves a claim past its lease: the lease and its readiness both lie in the past. */
export async function lapseLease(pool: Pool, id: string): Promise<void> {
  await pool.query(
    `UPDATE todos SET lease_expires_at = now() - interval '1 second', ready_at = now() - interval '1 second' WHERE id = $1`,
    [id],
  );
}

/** Makes a failed todo's retry due now. */
export async function dueRetry(pool: Pool, id: string): Promise<void> {
  await pool.query(
    `UPDATE todos SET next_retry_at = now() - interval '1 second', ready_at = now() - interval '1 second' WHERE id = $1`,
    [id],
  );
}

export interface AttemptRow {
  seq: number;
  attempt: number;
  session_id: string | null;
  outcome: string | null;
  ended: boolean;
}

export async function attemptsOf(pool: Pool, id: string): Promise<AttemptRow[]> {
  const res = await pool.query<AttemptRow>(
    `SELECT seq, attempt, session_id, outcome, ended_at IS NOT NULL AS ended FROM todo_attempts WHERE todo_id = $1 ORDER BY seq`,
    [id],
  );
  return res.rows;
}

export async function rowOf(pool: Pool, id: string): Promise<Record<string, unknown>> {
  const res = await pool.query(`SELECT * FROM todos WHERE id = $1`, [id]);
  assert.equal(res.rowCount, 1, `todo ${id} exists`);
  return res.rows[0] as Record<string, unknown>;
}
