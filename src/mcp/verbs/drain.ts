// The drain family: read, claim and settle the endpoint's todos. Every claim must end
// in complete, fail or release; `conflict` from an owner verb means the lease was lost.

import { z } from 'zod';
import { LIMITS } from '../../domain/todo.js';
import * as todos from '../../todos/index.js';
import {
  answerOut,
  attemptOut,
  linksOut,
  claimedOut,
  deferReason,
  leaseOut,
  routeOut,
  time,
  todoListedOut,
  todoOut,
} from '../../contract/shapes.js';
import type { Verb } from './types.js';
import { READS, SETTLES, WRITES } from './types.js';

/** One queue a budget held back during an empty claim_next. */
const deferredOut = z.object({
  queue: z.string(),
  reason: deferReason,
  pending: z.number().int(),
  next_eligible_at: time.nullable(),
  exact: z.boolean(),
});

export const drainVerbs: Verb[] = [
  {
    name: 'list_todos',
    annotations: READS,
    description:
      `List this endpoint's todos on its granted queues, newest first (default ${LIMITS.listDefault}, ` +
      `at most ${LIMITS.listMax}). Bodies and payloads are left out: claim a todo to read them.`,
    input: todos.listTodosInput,
    output: z.object({
      todos: z.array(todoListedOut),
      next_cursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last.'),
    }),
    async run(ctx, args) {
      const page = await todos.listTodos(ctx.todos, { endpointId: ctx.endpoint.id, queues: ctx.agent.queues }, args);
      return { todos: page.todos.map(todoOut), next_cursor: page.next_cursor };
    },
  },
  {
    name: 'get_todo',
    annotations: READS,
    description:
      'Read one todo (state, lease) and its attempts, with what each left, and its lineage (links: the parent ' +
      'it was handed from, the todos handed from it), without claiming it. Its body and payload come with a claim.',
    input: todos.getTodoInput,
    output: z.object({
      todo: todoListedOut,
      attempts: z.array(attemptOut),
      links: linksOut,
      answers: z.array(answerOut).describe('What humans answered to its ask_human questions, oldest first.'),
      route: routeOut.optional(),
    }),
    async run(ctx, args) {
      const scope = { endpointId: ctx.endpoint.id, queues: ctx.agent.queues };
      const { todo, attempts, answers, links, route } = await todos.getTodo(ctx.todos, scope, args);
      return { todo: todoOut(todo), attempts, answers, links, ...(route ? { route } : {}) };
    },
  },
  {
    name: 'claim',
    annotations: SETTLES,
    description:
      'Claim a todo by id under a lease, returning it with its body and payload. Heartbeat before the lease ' +
      'runs out; end the claim with complete, fail or release.',
    input: todos.claimInput,
    output: claimedOut,
    run: (ctx, args) => todos.claim(ctx.todos, ctx.agent, args),
  },
  {
    name: 'claim_next',
    annotations: WRITES,
    description:
      'Claim the oldest ready todo on one queue (or any granted queue), with its body and payload. ' +
      'Answers {"empty": true} when nothing is ready; pass wait_seconds to wait for work instead of polling.',
    input: todos.claimNextInput,
    output: z.union([
      claimedOut,
      z.object({
        empty: z.literal(true),
        deferred: z
          .array(deferredOut)
          .optional()
          .describe('The queues a budget held back, when that is why nothing was claimed.'),
      }),
    ]),
    run: (ctx, args) => todos.claimNext(ctx.todos, ctx.agent, args, { waiters: ctx.waiters, signal: ctx.signal }),
  },
  {
    name: 'heartbeat',
    annotations: WRITES,
    description:
      'Extend the lease on a todo you hold. Call it before any long step. `conflict` means you lost the todo: stop.',
    input: todos.heartbeatInput,
    output: leaseOut,
    run: async (ctx, args) => ({ todo: todoOut((await todos.heartbeat(ctx.todos, ctx.agent, args)).todo) }),
  },
  {
    name: 'complete',
    annotations: SETTLES,
    description:
      'Finish a todo you hold, with an optional JSON result, a summary for whoever looks next and an artifact ' +
      'reference (a URL, a commit). Pass lease_token when this is not the session that claimed it.',
    input: todos.completeInput,
    output: leaseOut,
    run: async (ctx, args) => ({ todo: todoOut((await todos.complete(ctx.todos, ctx.agent, args)).todo) }),
  },
  {
    name: 'fail',
    annotations: SETTLES,
    description:
      'Give up on a todo you hold. It is retried later with backoff while attempts remain (retry: false ' +
      'dead-letters it now), then dead-lettered; a summary tells the next attempt what you found.',
    input: todos.failInput,
    output: leaseOut,
    run: async (ctx, args) => ({ todo: todoOut((await todos.fail(ctx.todos, ctx.agent, args)).todo) }),
  },
  {
    name: 'ask_human',
    annotations: SETTLES,
    description:
      'Ask your owner a question about a todo you hold, when you need a decision you must not guess ' +
      '(offer choices for a pick, or let them answer in text). The claim ends and the todo waits, holding no ' +
      'budget slot; when they answer (or timeout_seconds pass) it comes back first in its queue, and the next ' +
      'claim carries `answers` (and `timed_out: true` if nobody answered). Do not keep working on it meanwhile.',
    input: todos.askHumanInput,
    output: leaseOut.extend({ expires_at: time.describe('When the question times out unanswered.') }),
    run: async (ctx, args) => {
      const asked = await todos.askHuman(ctx.todos, ctx.agent, args);
      return { todo: todoOut(asked.todo), expires_at: asked.expires_at };
    },
  },
  {
    name: 'release',
    annotations: SETTLES,
    description: 'Hand a todo you hold back to the queue untouched (the attempt is not counted as a failure).',
    input: todos.releaseInput,
    output: leaseOut,
    run: async (ctx, args) => ({ todo: todoOut((await todos.release(ctx.todos, ctx.agent, args)).todo) }),
  },
];
