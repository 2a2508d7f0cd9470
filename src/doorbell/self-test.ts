// The doorbell self-test use cases (docs/design/doorbell-acknowledgement.md, "The
// self-test"), for the MCP verbs test_doorbell and get_doorbell_test and the operator
// routes. Two phases: starting returns at once (a model cannot act on a doorbell while
// its own tool call is pending), and the ring follows about RING_DELAY_MS later
// (src/doorbell/self-test-ring.ts). Only the caller's own endpoint is ever tested; one
// test may be outstanding per endpoint and at most HOURLY_TESTS start an hour.

import { z } from 'zod';
import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { AppError, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import {
  announceTest,
  getTest,
  insertTest,
  lockEndpointTests,
  testQuota,
  type DoorbellTestRow,
} from '../store/doorbell-tests.js';
import { getEndpoint } from '../store/endpoints.js';
import { hintGuidance } from './hints.js';
import { freezeTest, readFacts, reportView, startView, type StoredReport } from './self-test-report.js';

/** Long enough for the starting tool call's answer to reach the model and its turn to end. */
export const RING_DELAY_MS = 2_000;
/** A self-test wakes a worker for one short turn; six an hour is plenty to debug a setup. */
export const HOURLY_TESTS = 6;
export const WAIT_SECONDS = { min: 10, max: 300, default: 60 } as const;

/** test_doorbell's arguments, as tools/list shows them. */
export const startDoorbellTestInput = z.strictObject({
  wait_seconds: z
    .number()
    .int()
    .min(WAIT_SECONDS.min)
    .max(WAIT_SECONDS.max)
    .optional()
    .describe(
      `How long to wait for the claim (${WAIT_SECONDS.min}–${WAIT_SECONDS.max} s, default ${WAIT_SECONDS.default}).`,
    ),
});
/** get_doorbell_test's arguments. */
export const getDoorbellTestInput = z.strictObject({
  test_id: z.string().min(1).check(maxLength(64)).describe('The test id from test_doorbell, `dt_…`.'),
});

export interface TestTarget {
  endpointId: string;
  /** The queue the synthetic todo goes on: one the endpoint is granted. */
  queue: string;
  via: 'mcp' | 'api';
  /** The MCP session that asked (it is the one rung); null from the API. */
  sessionId: string | null;
  humanId: string | null;
}

/** Freezes an expired test of the endpoint that nothing froze yet. */
async function settleIfExpired(db: Queryable, test: DoorbellTestRow): Promise<boolean> {
  if (test.report || !test.expired) return false;
  await freezeTest(db, test, 'expiry');
  return true;
}

export async function startDoorbellTest(db: Queryable, target: TestTarget, input: unknown) {
  const data = parseInput(startDoorbellTestInput, input ?? {});
  return inTransaction(db, async (tx) => {
    await lockEndpointTests(tx, target.endpointId);
    let quota = await testQuota(tx, target.endpointId);
    if (quota.outstanding && (await settleIfExpired(tx, quota.outstanding))) {
      quota = await testQuota(tx, target.endpointId);
    }
    if (quota.outstanding) {
      throw new AppError(
        'resource_exhausted',
        `a doorbell test is already running on this endpoint (${quota.outstanding.id}): read it with ` +
          `get_doorbell_test after ${quota.outstanding.expires_at.toISOString()}`,
        {
          test_id: quota.outstanding.id,
          report_after: quota.outstanding.expires_at.toISOString(),
          // A hint for the client (Retry-After on the API); the expiry itself is judged in SQL.
          retry_after_seconds: Math.max(1, Math.ceil((quota.outstanding.expires_at.getTime() - Date.now()) / 1000)),
        },
      );
    }
    if (quota.last_hour >= HOURLY_TESTS) {
      throw new AppError(
        'resource_exhausted',
        `at most ${HOURLY_TESTS} doorbell tests an hour per endpoint: retry later`,
        {
          limit: HOURLY_TESTS,
        },
      );
    }
    const test = await insertTest(tx, {
      endpointId: target.endpointId,
      testId: newId('dt'),
      todoId: newId('td'),
      queue: target.queue,
      waitSeconds: data.wait_seconds ?? WAIT_SECONDS.default,
      ringDelayMs: RING_DELAY_MS,
      startedVia: target.via,
      sessionId: target.sessionId,
      createdByHumanId: target.humanId,
      createdByEndpointId: target.via === 'mcp' ? target.endpointId : null,
    });
    await announceTest(tx, target.endpointId, test.id);
    return startView(test, await readFacts(tx, test));
  });
}

/**
 * The report of one of this endpoint's tests; another endpoint's test id is not_found.
 * The hints name the endpoint's MCP server and `{publicUrl}/docs/doorbell`; a caller that
 * does not know the server's public URL (the MCP verb today) gets a placeholder for it.
 */
export async function getDoorbellTest(db: Queryable, endpointId: string, input: unknown, publicUrl?: string) {
  const { test_id: testId } = parseInput(getDoorbellTestInput, input);
  let test = await getTest(db, endpointId, testId);
  if (!test) throw notFound('doorbell test', testId);
  if (await settleIfExpired(db, test)) test = (await getTest(db, endpointId, testId)) ?? test;
  const endpoint = await getEndpoint(db, endpointId);
  if (!endpoint) throw notFound('doorbell test', testId);
  const guidance = hintGuidance(endpoint.slug, publicUrl ?? null);
  if (test.report) return reportView(test, test.report as unknown as StoredReport, null, guidance);
  return reportView(test, null, await readFacts(db, test), guidance);
}
