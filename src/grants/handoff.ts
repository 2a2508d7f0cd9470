// create_todo with a hand-off (docs/design/handoff.md, "Hand-off"): with `endpoint`, the
// todo lands on that endpoint's queue under an active grant from the caller; with
// `parent_id` it is linked to one of the caller's todos (lineage); with `reply` its outcome
// comes back when it ends (src/grants/reply.ts). One transaction: the grant row is locked
// (a revoke waits, then every later hand-off sees it), the depth, ceiling and rate are
// checked, the existing create use case inserts on the target (its quota, and the
// todo_ready that brings its admission, presence and doorbell), and the link is written.
// A target that is unknown, revoked, not granted to the caller, or whose grant does not
// cover the queue answers one not_found: a caller learns nothing about other owners.

import { z } from 'zod';
import { inTransaction } from '../db/tx.js';
import { SLUG } from '../domain/endpoint.js';
import { AppError } from '../domain/errors.js';
import { parseInput, todoId, type Todo } from '../domain/todo.js';
import { countHandoff, liveEndpointBySlug, lockActiveGrant } from '../store/grants.js';
import { depthOf, insertLink } from '../store/todo-links.js';
import { getTodo } from '../store/todos.js';
import { agentCreateTodoInput, createTodo } from '../todos/create.js';
import type { Agent, TodoDeps } from '../todos/context.js';

/** The hand-off settings (SWITCHBOARD_HANDOFF_DEPTH_MAX). */
export interface HandoffSettings {
  depthMax: number;
}

/** The default depth bound, as the setting's default (src/config/schema.ts). */
export const DEFAULT_HANDOFF: HandoffSettings = { depthMax: 8 };

/** create_todo's arguments, as tools/list shows them. */
export const handoffCreateInput = agentCreateTodoInput.extend({
  endpoint: z
    .string()
    .regex(SLUG, 'must be an endpoint slug')
    .optional()
    .describe(
      "Another endpoint's slug: the todo lands on its queue, under a grant from this endpoint covering the queue.",
    ),
  parent_id: todoId
    .optional()
    .describe('One of your todos this one is part of (lineage; get_todo shows it both ways).'),
  reply: z
    .boolean()
    .optional()
    .describe(
      'true: when the new todo ends (done, failed for good, canceled) its outcome comes back to you, as a ' +
        "message to a live session, else as a todo on the parent's queue.",
    ),
});

const HANDOFF_KEYS = new Set(['endpoint', 'parent_id', 'reply']);

/** The caller: an agent's session on its endpoint. */
export type HandoffCaller = Agent & { endpointSlug: string };

function targetNotFound(slug: string): AppError {
  return new AppError('not_found', `endpoint: ${slug} not found (or no active grant covers the queue)`, {
    field: 'endpoint',
    id: slug,
  });
}

/** create_todo: a plain create on the caller's queue, or a hand-off, linked when asked. */
export async function createOrHandOff(
  deps: TodoDeps,
  settings: HandoffSettings,
  caller: HandoffCaller,
  input: unknown,
): Promise<{ todo: Todo; created: boolean }> {
  // The use case's own check names `source` first; the rest is parsed here whole.
  if (typeof input === 'object' && input !== null && 'source' in input) {
    return createTodo(deps, { endpointId: caller.endpointId }, { endpointId: caller.endpointId }, input);
  }
  const data = parseInput(handoffCreateInput, input);
  // What the create use case parses itself: the arguments without the hand-off's own.
  const raw = Object.fromEntries(Object.entries(input as object).filter(([k]) => !HANDOFF_KEYS.has(k)));
  const own = data.endpoint === undefined || data.endpoint === caller.endpointSlug;
  const sender = { endpointId: caller.endpointId };
  if (own && data.parent_id === undefined && data.reply !== true) {
    return createTodo(deps, { endpointId: caller.endpointId, grantedQueues: caller.queues }, sender, raw);
  }
  return inTransaction(deps.db, async (tx) => {
    const inTx = { ...deps, db: tx };
    let depth = 1;
    let replyQueue = caller.queues[0] ?? data.queue;
    if (data.parent_id !== undefined) {
      const parent = await getTodo(tx, { endpointId: caller.endpointId, queues: caller.queues }, data.parent_id);
      if (!parent) {
        throw new AppError('not_found', `parent_id: todo ${data.parent_id} not found`, {
          field: 'parent_id',
          id: data.parent_id,
        });
      }
      replyQueue = parent.queue;
      depth = (await depthOf(tx, caller.endpointId, parent.id)) + 1;
      if (depth > settings.depthMax) {
        throw new AppError(
          'failed_precondition',
          `parent_id: this hand-off would be ${depth} deep, past the limit of ${settings.depthMax} ` +
            '(SWITCHBOARD_HANDOFF_DEPTH_MAX); finish the work here or hand it to a human',
          { field: 'parent_id', depth, limit: settings.depthMax },
        );
      }
    }
    let made: { todo: Todo; created: boolean };
    if (own) {
      made = await createTodo(inTx, { endpointId: caller.endpointId, grantedQueues: caller.queues }, sender, raw);
    } else {
      const slug = data.endpoint!;
      const target = await liveEndpointBySlug(tx, slug);
      const grant = target ? await lockActiveGrant(tx, caller.endpointId, target.id) : null;
      if (!target || !grant || !grant.queues.includes(data.queue) || !target.queues.includes(data.queue)) {
        throw targetNotFound(slug);
      }
      if (grant.max_priority !== null && (data.priority ?? 0) > grant.max_priority) {
        throw new AppError('invalid_argument', `priority: at most ${grant.max_priority} under this grant`, {
          field: 'priority',
          limit: grant.max_priority,
        });
      }
      if (grant.rate_per_hour !== null && grant.used >= grant.rate_per_hour) {
        throw new AppError('resource_exhausted', `this grant allows ${grant.rate_per_hour} hand-offs per hour`, {
          limit: grant.rate_per_hour,
          retry_after_seconds: 60,
        });
      }
      made = await createTodo(inTx, { endpointId: target.id, source: caller.endpointSlug }, sender, raw);
      if (made.created) await countHandoff(tx, grant.id);
    }
    if (made.created) {
      await insertLink(tx, {
        childEndpointId: made.todo.endpoint_id,
        childId: made.todo.id,
        fromEndpointId: caller.endpointId,
        parentId: data.parent_id ?? null,
        reply: data.reply === true,
        replyQueue,
        depth,
      });
    }
    return made;
  });
}
