// Todos as every read answers them: pending todos of a budgeted queue with their
// `admission` status (docs/design/admission.md), and each todo that waits with its
// `waiting` (docs/design/todos.md, "Why is it waiting"). A read of any number of todos
// costs three statements: the endpoint's budget statuses, its facts (presence, queues,
// live sessions), and the todos' claim-order keys with a capped count ahead of each one
// that is queued — never one statement per todo per reason.

import type { TodoAdmission } from '../admission/status.js';
import { annotate } from '../admission/status.js';
import { queueStatuses } from '../budgets/status.js';
import type { Queryable } from '../db/pool.js';
import type { Todo } from '../domain/todo.js';
import type { Waiting } from '../domain/waiting.js';
import { waitingFacts, waitingKeys } from '../store/todo-waiting.js';
import { mayWait, queueHold, waitingOf } from './waiting.js';

export type ReadTodo = Todo & { admission?: TodoAdmission; waiting?: Waiting };

/** The todos, in their order, with `admission` and `waiting` where they apply. */
export async function withWaiting(db: Queryable, endpointId: string, todos: Todo[]): Promise<ReadTodo[]> {
  const waiting = todos.filter(mayWait);
  if (waiting.length === 0) return todos;
  const queues = [...new Set(waiting.map((t) => t.queue))];
  const statuses = await queueStatuses(db, endpointId, queues);
  const annotated = annotate(todos, statuses);
  const facts = await waitingFacts(db, endpointId);
  if (!facts) return annotated;
  const holds = new Map(queues.map((q) => [q, queueHold(facts, q, statuses.get(q))]));
  const keys = await waitingKeys(db, {
    endpointId,
    ids: waiting.map((t) => t.id),
    countQueues: queues.filter((q) => holds.get(q) === null),
  });
  const byId = new Map(keys.map((k) => [k.id, k]));
  return annotated.map((t) => {
    const w = waitingOf(t, byId.get(t.id), holds.get(t.queue) ?? null);
    return w ? { ...t, waiting: w } : t;
  });
}
