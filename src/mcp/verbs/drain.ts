// The drain family: read, claim and settle the endpoint's todos. Every claim must end
// in complete, fail or release; `conflict` from an owner verb means the lease was lost.

import { z } from 'zod/v4';
import { LEASE_BOUNDS, LIMITS, TODO_STATES } from '../../domain/todo.js';
import * as todos from '../../todos/index.js';
import { todoOut } from './shapes.js';
import type { Verb } from './types.js';

const id = z.string().describe('The todo id, `td_…`.');
const lease = z
  .number()
  .int()
  .min(LEASE_BOUNDS.min)
  .max(LEASE_BOUNDS.max)
  .optional()
  .describe(`Lease length in seconds (${LEASE_BOUNDS.min}–${LEASE_BOUNDS.max}); default: this endpoint's lease.`);
const queue = z.string().describe('A queue name granted to this endpoint, e.g. `inbox`.');

export const drainVerbs: Verb[] = [
  {
    name: 'list_todos',
    description:
      `List this endpoint's todos on its granted queues, newest first (default ${LIMITS.listDefault}, ` +
      `at most ${LIMITS.listMax}). Bodies and payloads are left out: claim a todo to read them.`,
    input: z.strictObject({
      queue: queue.optional(),
      state: z.enum(TODO_STATES).optional().describe('Only todos in this state.'),
      limit: z.number().int().min(1).max(LIMITS.listMax).optional().describe('Page size.'),
      cursor: z.string().optional().describe('`next_cursor` from the previous page.'),
      include_synthetic: z.boolean().optional().describe('Include doorbell self-test todos.'),
    }),
    async run(ctx, args) {
      const page = await todos.listTodos(ctx.todos, { endpointId: ctx.endpoint.id, queues: ctx.agent.queues }, args);
      return { todos: page.todos.map(todoOut), next_cursor: page.next_cursor };
    },
  },
  {
    name: 'get_todo',
    description: 'Read one todo (state, attempts, lease) without claiming it. Its body and payload come with a claim.',
    input: z.strictObject({ id }),
    async run(ctx, args) {
      const { todo } = await todos.getTodo(ctx.todos, { endpointId: ctx.endpoint.id, queues: ctx.agent.queues }, args);
      return { todo: todoOut(todo) };
    },
  },
  {
    name: 'claim',
    description:
      'Claim a todo by id under a lease, returning it with its body and payload. Heartbeat before the lease ' +
      'runs out; end the claim with complete, fail or release.',
    input: z.strictObject({ id, lease_seconds: lease }),
    run: (ctx, args) => todos.claim(ctx.todos, ctx.agent, args),
  },
  {
    name: 'claim_next',
    description:
      'Claim the oldest ready todo on one queue (or any granted queue), with its body and payload. ' +
      'Answers {"empty": true} when nothing is ready.',
    input: z.strictObject({ queue: queue.optional(), lease_seconds: lease }),
    run: (ctx, args) => todos.claimNext(ctx.todos, ctx.agent, args),
  },
  {
    name: 'heartbeat',
    description:
      'Extend the lease on a todo you hold. Call it before any long step. `conflict` means you lost the todo: stop.',
    input: z.strictObject({ id, lease_seconds: lease }),
    run: async (ctx, args) => ({ todo: todoOut((await todos.heartbeat(ctx.todos, ctx.agent, args)).todo) }),
  },
  {
    name: 'complete',
    description: 'Finish a todo you hold, with an optional JSON result.',
    input: z.strictObject({ id, result: z.unknown().optional().describe('Any JSON value, at most 256 KiB.') }),
    run: async (ctx, args) => ({ todo: todoOut((await todos.complete(ctx.todos, ctx.agent, args)).todo) }),
  },
  {
    name: 'fail',
    description:
      'Give up on a todo you hold. It is retried later with backoff while attempts remain, then dead-lettered.',
    input: z.strictObject({
      id,
      error: z.string().optional().describe('What went wrong, for whoever looks next.'),
      result: z.unknown().optional().describe('Any JSON value, at most 256 KiB.'),
    }),
    run: async (ctx, args) => ({ todo: todoOut((await todos.fail(ctx.todos, ctx.agent, args)).todo) }),
  },
  {
    name: 'release',
    description: 'Hand a todo you hold back to the queue untouched (the attempt is not counted as a failure).',
    input: z.strictObject({ id }),
    run: async (ctx, args) => ({ todo: todoOut((await todos.release(ctx.todos, ctx.agent, args)).todo) }),
  },
];
