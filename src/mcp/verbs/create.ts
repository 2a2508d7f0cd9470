// The create family: put a todo on one of this endpoint's own granted queues, or hand it
// to another endpoint under a grant, linked to a parent and replied to when asked
// (docs/design/handoff.md).

import { z } from 'zod';
import { createOrHandOff, DEFAULT_HANDOFF, handoffCreateInput } from '../../grants/handoff.js';
import { todoListedOut, todoOut } from '../../contract/shapes.js';
import type { Verb } from './types.js';
import { WRITES } from './types.js';

export const createVerbs: Verb[] = [
  {
    name: 'create_todo',
    annotations: WRITES,
    description:
      "Put a todo on one of this endpoint's granted queues. With an idempotency_key, a repeat returns the " +
      'existing live todo and created: false. With endpoint (a slug), hand it to that endpoint under a grant ' +
      'covering the queue (an unknown endpoint and one without a grant answer the same not_found). parent_id ' +
      'links it to one of your todos; reply: true sends its outcome back to you when it ends.',
    input: handoffCreateInput,
    output: z.object({
      todo: todoListedOut,
      created: z.boolean().describe('False when an idempotency_key matched a live todo, which is returned.'),
    }),
    async run(ctx, args) {
      // An endpoint is an agent's sender: the use case takes no `source` from it.
      const { todo, created } = await createOrHandOff(
        ctx.todos,
        ctx.handoff ?? DEFAULT_HANDOFF,
        { ...ctx.agent, endpointSlug: ctx.endpoint.slug },
        args,
      );
      return { todo: todoOut(todo), created };
    },
  },
];
