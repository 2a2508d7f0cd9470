// Self-tests as a signed-in human starts and reads them (POST/GET
// /api/v1/endpoints/{ref}/doorbell-tests, `switchboard doctor`): the same tests as the MCP
// verbs, on the human's own endpoints only, through the ownership check revoke and show
// use. Another human's endpoint, or a test of another endpoint, answers not_found.

import type { Queryable } from '../db/pool.js';
import { endpointState } from '../domain/endpoint.js';
import { AppError } from '../domain/errors.js';
import { resolveEndpoint } from './manage.js';
import { getDoorbellTest, startDoorbellTest } from '../doorbell/self-test.js';

export interface OperatorTestDeps {
  db: Queryable;
  publicUrl: string;
}

export async function startOwnedTest(deps: OperatorTestDeps, humanId: string, ref: string, input: unknown, now: Date) {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  if (endpointState(endpoint, now) !== 'active') {
    throw new AppError('conflict', `endpoint ${endpoint.slug} is revoked or expired: nothing can hear a doorbell`, {
      id: endpoint.id,
    });
  }
  const target = {
    endpointId: endpoint.id,
    queue: endpoint.queues[0] ?? 'inbox',
    via: 'api' as const,
    sessionId: null,
    humanId,
  };
  return startDoorbellTest(deps.db, target, input ?? {});
}

export async function getOwnedTest(deps: OperatorTestDeps, humanId: string, ref: string, testId: string) {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  return getDoorbellTest(deps.db, endpoint.id, { test_id: testId }, deps.publicUrl);
}
