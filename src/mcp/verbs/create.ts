// The create family: put a todo on one of this endpoint's own granted queues.

import { z } from 'zod';
import { agentCreateTodoInput, createTodo } from '../../todos/index.js';
import { todoListedOut, todoOut } from '../../contract/shapes.js';
import type { Verb } from './types.js';
import { WRITES } from './types.js';

export const createVerbs: Verb[] = [
  {
    name: 'create_todo',
    annotations: WRITES,
    description:
      "Put a todo on one of this endpoint's granted queues. With an idempotency_key, a repeat returns the " +
      'existing live todo and created: false.',
    input: agentCreateTodoInput,
    output: z.object({
      todo: todoListedOut,
      created: z.boolean().describe('False when an idempotency_key matched a live todo, which is returned.'),
    }),
    async run(ctx, args) {
      // An endpoint is an agent's sender: the use case takes no `source` from it.
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
