// The doorbell self-test on the wire (docs/design/doorbell-acknowledgement.md): the
// test_doorbell and get_doorbell_test verbs' output schemas and the answers of POST/GET
// /api/v1/endpoints/{ref}/doorbell-tests, one schema for both (src/doorbell/self-test-report.ts
// builds the values).

import { z } from 'zod';
import { time } from './shapes.js';

/** What the server knows of the clients' channel support (src/doorbell/self-test-report.ts). */
export const channelCapability = z.object({
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

/** test_doorbell's answer, and POST doorbell-tests'. */
export const doorbellTestStartedOut = z.object({
  test_id: z.string(),
  todo_id: z.string().describe('The self-test todo the doorbell will name: claim it by id.'),
  report_after: time,
  wait_seconds: z.number().int(),
  server_version: z.string(),
  stream_attached: z.boolean(),
  channel_capability: channelCapability,
});

/** get_doorbell_test's answer, and GET doorbell-tests/{test_id}'s. */
export const doorbellReportOut = z.object({
  test_id: z.string(),
  todo_id: z.string(),
  verdict: z
    .enum(['pending', 'pass', 'no_session', 'no_channel', 'no_stream', 'write_failed', 'unheard'])
    .describe('pending until report_after; pass: delivered and heard (src/doorbell/hints.ts).'),
  server_version: z.string(),
  started_at: time,
  report_after: time,
  started_via: z.enum(['mcp', 'api']),
  stream_attached: z.boolean(),
  channel_capability: channelCapability,
  delivered: z.object({ written: z.boolean(), at: time.nullable(), session_id: z.string().nullable() }),
  claimed_within_seconds: z.number().nullable(),
  hints: z.array(z.string()),
});
