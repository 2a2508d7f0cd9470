// The create family: put a todo on one of this endpoint's own granted queues.

import { z } from 'zod/v4';
import { invalidArgument } from '../../domain/errors.js';
import { LIMITS } from '../../domain/todo.js';
import { createTodo } from '../../todos/index.js';
import { todoOut } from './shapes.js';
import type { Verb } from './types.js';

export const createVerbs: Verb[] = [
  {
    name: 'create_todo',
    description:
      "Put a todo on one of this endpoint's granted queues. With an idempotency_key, a repeat returns the " +
      'existing live todo and created: false.',
    input: z.strictObject({
      queue: z.string().describe('A queue name granted to this endpoint, e.g. `inbox`.'),
      title: z.string().describe(`One line saying what to do (at most ${LIMITS.titleChars} characters).`),
      body: z.string().optional().describe('Details in text, at most 64 KiB.'),
      payload: z.unknown().optional().describe('Any JSON value for the worker, at most 256 KiB.'),
      kind: z.string().optional().describe('A short label for the kind of work.'),
      idempotency_key: z.string().optional().describe('Makes a repeated create return the same live todo.'),
      max_attempts: z
        .number()
        .int()
        .min(1)
        .max(LIMITS.maxAttempts)
        .optional()
        .describe(`Claims allowed before it is dead-lettered (default ${LIMITS.defaultMaxAttempts}).`),
    }),
    async run(ctx, args) {
      // `source` is set by the surfaces that ingest (webhooks), never by an agent.
      if ('source' in args) throw invalidArgument('source', 'is not a known field');
      const { todo, created } = await createTodo(
        ctx.todos,
        { endpointId: ctx.endpoint.id, grantedQueues: ctx.agent.queues },
        { endpointId: ctx.endpoint.id },
        args,
      );
      return { todo: todoOut(todo), created };
    },
  },
];
