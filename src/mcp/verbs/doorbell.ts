// The doorbell's self verbs (docs/design/doorbell-acknowledgement.md): need no grant and
// act only on the caller's own endpoint. ack_doorbell says "heard" for a ring a claim
// cannot cover; test_doorbell and get_doorbell_test prove the whole loop (delivered to
// the stream, then heard: claimed).

import { z } from 'zod';
import { ackDoorbell, ackDoorbellInput } from '../../doorbell/ack.js';
import {
  getDoorbellTest,
  getDoorbellTestInput,
  startDoorbellTest,
  startDoorbellTestInput,
} from '../../doorbell/self-test.js';
import { doorbellReportOut, doorbellTestStartedOut } from '../../contract/doorbell.js';
import type { Verb } from './types.js';
import { READS, SETTLES, WRITES } from './types.js';

export const doorbellVerbs: Verb[] = [
  {
    name: 'ack_doorbell',
    annotations: SETTLES,
    description:
      'Say you heard a doorbell without claiming its todo (a digest, or work you will not take now). ' +
      'Claiming the todo already acknowledges its doorbell, so you rarely need this. Idempotent.',
    input: ackDoorbellInput,
    output: z.object({
      ring_id: z.string(),
      state: z.literal('acknowledged'),
      late: z.boolean().describe('Acknowledged after the ack window had called it unheard.'),
      already: z.boolean().describe('It had been acknowledged before.'),
    }),
    run: (ctx, args) =>
      ackDoorbell(
        { db: ctx.todos.db, ...(ctx.todos.metrics ? { metrics: ctx.todos.metrics } : {}) },
        { endpointId: ctx.endpoint.id, sessionId: ctx.sessionId },
        args,
      ),
  },
  {
    name: 'test_doorbell',
    annotations: WRITES,
    description:
      'Check that this session hears doorbells. Returns at once; about 2 s later a doorbell rings this session ' +
      'for a self-test todo. When it arrives, claim that todo by id (no work is needed: the claim completes it). ' +
      'Then read the verdict with get_doorbell_test after report_after.',
    input: startDoorbellTestInput,
    output: doorbellTestStartedOut,
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
    annotations: READS,
    description:
      'The report of a doorbell self-test: whether the doorbell was delivered (written to the stream), whether ' +
      'it was heard (claimed, and how fast), the verdict, and hints that fix a failing setup.',
    input: getDoorbellTestInput,
    output: doorbellReportOut,
    run: (ctx, args) => getDoorbellTest(ctx.todos.db, ctx.endpoint.id, args, ctx.publicUrl),
  },
];
