// Self verbs: need no grant and act only on the caller. Only whoami is here; the
// doorbell and message verbs (ack_doorbell, test_doorbell, …) come with their parts.

import { z } from 'zod';
import { parseInput } from '../../domain/todo.js';
import { noArguments } from '../../contract/shapes.js';
import type { Verb } from './types.js';
import { READS } from './types.js';

export const selfVerbs: Verb[] = [
  {
    name: 'whoami',
    annotations: READS,
    description: 'Which endpoint this session acts as: its id, slug, granted queues and verbs, and the session id.',
    input: noArguments,
    output: z.object({
      endpoint: z.object({
        id: z.string(),
        slug: z.string(),
        queues: z.array(z.string()).describe('The granted queues.'),
        verbs: z.array(z.string()).describe('The granted verbs (the self verbs need no grant).'),
      }),
      session_id: z.string(),
    }),
    async run(ctx, args) {
      parseInput(noArguments, args);
      const { id, slug, queues, verbs } = ctx.endpoint;
      return { endpoint: { id, slug, queues, verbs }, session_id: ctx.sessionId };
    },
  },
];
