// Shared set-up for the admission tests: an endpoint with budgeted queues, its agents,
// policies written through the service, and readers of the counters
// docs/design/admission.md says must agree (window rows, attempt rows).

import assert from 'node:assert/strict';
import type { Pool } from '../../src/db/pool.js';
import { setPolicy } from '../../src/budgets/service.js';
import { AppError, type ErrorCode } from '../../src/domain/errors.js';
import { createTodo, type Agent, type ClaimNextResult, type TodoDeps } from '../../src/todos/index.js';
import type { Todo } from '../../src/domain/todo.js';
import { agentOf, makeEndpoint } from '../helpers/fixtures.js';

export interface Budgeted {
  endpointId: string;
  humanId: string;
  agent: Agent;
  other: Agent;
  deps: TodoDeps;
  push: (queue?: string, extra?: Record<string, unknown>) => Promise<Todo>;
  budget: (queue: string, policy: Record<string, unknown>) => Promise<unknown>;
}

export const DAY_UTC = { period: 'day', tz: 'UTC', start: '00:00' };

export async function budgeted(
  pool: Pool,
  queues = ['inbox'],
  deps: TodoDeps = { db: pool, defaultLeaseSeconds: 300 },
): Promise<Budgeted> {
  const endpoint = await makeEndpoint(pool, { queues });
  return {
    endpointId: endpoint.id,
    humanId: endpoint.human_id,
    agent: agentOf(endpoint, 'session-a'),
    other: agentOf(endpoint, 'session-b'),
    deps,
    push: async (queue = queues[0] ?? 'inbox', extra = {}) =>
      (
        await createTodo(
          deps,
          { endpointId: endpoint.id },
          { humanId: endpoint.human_id },
          {
            queue,
            title: 'budgeted work',
            ...extra,
          },
        )
      ).todo,
    budget: (queue, policy) =>
      setPolicy({ db: pool }, { humanId: endpoint.human_id, endpointId: null }, endpoint.id, queue, policy),
  };
}

export async function windowUsed(pool: Pool, endpointId: string, queue: string): Promise<number> {
  const res = await pool.query<{ used: number }>(
    `SELECT coalesce(sum(w.used), 0)::int AS used FROM admission_windows w
       JOIN admission_policies p ON p.id = w.policy_id WHERE p.endpoint_id = $1 AND p.queue = $2`,
    [endpointId, queue],
  );
  return res.rows[0]?.used ?? 0;
}

export async function attemptRows(pool: Pool, endpointId: string, queue: string): Promise<number> {
  const res = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM todo_attempts a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
      WHERE a.endpoint_id = $1 AND t.queue = $2`,
    [endpointId, queue],
  );
  return res.rows[0]?.n ?? 0;
}

export function claimedTodo(result: ClaimNextResult): Todo & { admission?: unknown } {
  assert.ok('todo' in result, `expected a claim, got ${JSON.stringify(result)}`);
  return result.todo;
}

export async function rejects(promise: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but the call succeeded`);
}
