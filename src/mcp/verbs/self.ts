// Self verbs: need no grant and act only on the caller. Only whoami is here; the
// doorbell and message verbs (ack_doorbell, test_doorbell, …) come with their parts.

import { z } from 'zod/v4';
import { z as z3 } from 'zod';
import { parseInput } from '../../domain/todo.js';
import type { Verb } from './types.js';

const noArguments = z3.object({}).strict();

export const selfVerbs: Verb[] = [
  {
    name: 'whoami',
    description: 'Which endpoint this session acts as: its id, slug, granted queues and verbs, and the session id.',
    input: z.strictObject({}),
    async run(ctx, args) {
      parseInput(noArguments, args);
      const { id, slug, queues, verbs } = ctx.endpoint;
      return { endpoint: { id, slug, queues, verbs }, session_id: ctx.sessionId };
    },
  },
];
