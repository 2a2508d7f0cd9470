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
import { openAsks } from '../store/asks.js';
import { mayWait, queueHold, waitingOf } from './waiting.js';

export type ReadTodo = Todo & { admission?: TodoAdmission; waiting?: Waiting };

/** The todos, in their order, with `admission` and `waiting` where they apply. */
export async function withWaiting(db: Queryable, endpointId: string, todos: Todo[]): Promise<ReadTodo[]> {
  return withHumanWaiting(db, endpointId, await withQueueWaiting(db, endpointId, todos));
}

/**
 * A todo parked on a question waits for its answer (docs/design/ask-human.md): its reason
 * is the open question, read with one statement for all of them.
 */
async function withHumanWaiting(db: Queryable, endpointId: string, todos: ReadTodo[]): Promise<ReadTodo[]> {
  const parked = todos.filter((t) => t.state === 'waiting_on_human');
  if (parked.length === 0) return todos;
  const asks = new Map(
    (
      await openAsks(
        db,
        endpointId,
        parked.map((t) => t.id),
      )
    ).map((a) => [a.todo_id, a]),
  );
  return todos.map((t) => {
    const ask = t.state === 'waiting_on_human' ? asks.get(t.id) : undefined;
    if (!ask) return t;
    const waiting: Waiting = {
      reason: 'waiting_on_human',
      since: ask.asked_at.toISOString(),
      question: ask.question,
      ...(ask.choices ? { choices: ask.choices } : {}),
    };
    return { ...t, waiting };
  });
}

async function withQueueWaiting(db: Queryable, endpointId: string, todos: Todo[]): Promise<ReadTodo[]> {
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
