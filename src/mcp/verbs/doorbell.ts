// The doorbell's self verbs (docs/design/doorbell-acknowledgement.md): need no grant and
// act only on the caller's own endpoint. ack_doorbell says "heard" for a ring a claim
// cannot cover; test_doorbell and get_doorbell_test prove the whole loop (delivered to
// the stream, then heard: claimed).

import { z } from 'zod';
import { ackDoorbell, ackDoorbellInput } from '../../doorbell/ack.js';
import { VERDICTS } from '../../doorbell/hints.js';
import {
  getDoorbellTest,
  getDoorbellTestInput,
  startDoorbellTest,
  startDoorbellTestInput,
} from '../../doorbell/self-test.js';
import { time } from '../../contract/shapes.js';
import type { Verb } from './types.js';
import { READS, SETTLES, WRITES } from './types.js';

/** What the server knows of the clients' channel support (src/doorbell/self-test-report.ts). */
const channelCapability = z.object({
  server_advertised: z.literal(true),
  clients: z.array(z.object({ name: z.string().nullable(), version: z.string().nullable() })),
  sessions: z
    .array(
      z.object({
        session_id: z.string(),
        declared: z.boolean().describe('Its initialize declared the claude/channel experimental capability.'),
        woken_by: z
          .enum(['doorbell', 'long_poll'])
          .describe('doorbell: it is rung; long_poll: it is never rung and waits with claim_next {wait_seconds}.'),
      }),
    )
    .describe('The sessions the test is about, and how each hears of new work.'),
  note: z.string(),
});

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
    output: z.object({
      test_id: z.string(),
      todo_id: z.string().describe('The self-test todo the doorbell will name: claim it by id.'),
      report_after: time,
      wait_seconds: z.number().int(),
      server_version: z.string(),
      stream_attached: z.boolean(),
      channel_capability: channelCapability,
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
    annotations: READS,
    description:
      'The report of a doorbell self-test: whether the doorbell was delivered (written to the stream), whether ' +
      'it was heard (claimed, and how fast), the verdict, and hints that fix a failing setup.',
    input: getDoorbellTestInput,
    output: z.object({
      test_id: z.string(),
      todo_id: z.string(),
      verdict: z.enum(VERDICTS),
      server_version: z.string(),
      started_at: time,
      report_after: time,
      started_via: z.enum(['mcp', 'api']),
      stream_attached: z.boolean(),
      channel_capability: channelCapability,
      delivered: z.object({ written: z.boolean(), at: time.nullable(), session_id: z.string().nullable() }),
      claimed_within_seconds: z.number().nullable(),
      hints: z.array(z.string()),
    }),
    run: (ctx, args) => getDoorbellTest(ctx.todos.db, ctx.endpoint.id, args, ctx.publicUrl),
  },
];
