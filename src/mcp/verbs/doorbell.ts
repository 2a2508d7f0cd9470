// The doorbell's self verbs (docs/design/doorbell-acknowledgement.md): need no grant and
// act only on the caller's own endpoint. ack_doorbell says "heard" for a ring a claim
// cannot cover; test_doorbell and get_doorbell_test prove the whole loop (delivered to
// the stream, then heard: claimed).

import { z } from 'zod/v4';
import { ackDoorbell } from '../../doorbell/ack.js';
import { getDoorbellTest, startDoorbellTest, WAIT_SECONDS } from '../../doorbell/self-test.js';
import type { Verb } from './types.js';

export const doorbellVerbs: Verb[] = [
  {
    name: 'ack_doorbell',
    description:
      'Say you heard a doorbell without claiming its todo (a digest, or work you will not take now). ' +
      'Claiming the todo already acknowledges its doorbell, so you rarely need this. Idempotent.',
    input: z.strictObject({ ring_id: z.string().describe('meta.ring_id of the doorbell, `rg_…`.') }),
    run: (ctx, args) =>
      ackDoorbell(
        { db: ctx.todos.db, ...(ctx.todos.metrics ? { metrics: ctx.todos.metrics } : {}) },
        { endpointId: ctx.endpoint.id, sessionId: ctx.sessionId },
        args,
      ),
  },
  {
    name: 'test_doorbell',
    description:
      'Check that this session hears doorbells. Returns at once; about 2 s later a doorbell rings this session ' +
      'for a self-test todo. When it arrives, claim that todo by id (no work is needed: the claim completes it). ' +
      'Then read the verdict with get_doorbell_test after report_after.',
    input: z.strictObject({
      wait_seconds: z
        .number()
        .int()
        .min(WAIT_SECONDS.min)
        .max(WAIT_SECONDS.max)
        .optional()
        .describe(
          `How long to wait for the claim (${WAIT_SECONDS.min}–${WAIT_SECONDS.max} s, default ${WAIT_SECONDS.default}).`,
        ),
    }),
    run: (ctx, args) =>
      startDoorbellTest(
        ctx.todos.db,
        {
          endpointId: ctx.endpoint.id,
          queue: ctx.agent.queues[0] ?? 'inbox',
          via: 'mcp',
          sessionId: ctx.sessionId,
          humanId: null,
        },
        args,
      ),
  },
  {
    name: 'get_doorbell_test',
    description:
      'The report of a doorbell self-test: whether the doorbell was delivered (written to the stream), whether ' +
      'it was heard (claimed, and how fast), the verdict, and hints that fix a failing setup.',
    input: z.strictObject({ test_id: z.string().describe('The test id from test_doorbell, `dt_…`.') }),
    run: (ctx, args) => getDoorbellTest(ctx.todos.db, ctx.endpoint.id, args),
  },
];
