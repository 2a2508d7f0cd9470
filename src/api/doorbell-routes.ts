// /api/v1 routes for doorbell self-tests (docs/design/doorbell-acknowledgement.md): a
// signed-in human starts and reads a test of one of their own endpoints.
// `switchboard doctor` is their client.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { startDoorbellTestInput } from '../doorbell/self-test.js';
import { route } from '../http/contract.js';
import { refParams } from './contract-common.js';
import { doorbellReportOut, doorbellTestStartedOut } from '../contract/doorbell.js';
import { getOwnedTest, startOwnedTest, type OperatorTestDeps } from '../endpoints/doorbell-tests.js';
import type { Auth } from '../http/auth.js';

const testParams = refParams.extend({ test_id: z.string().min(1).max(100).describe('`dt_…`') });

export function doorbellRoutes(app: FastifyInstance, deps: OperatorTestDeps, auth: Auth, now: () => Date): void {
  const doorbell = { tag: 'doorbell', access: 'human' } as const;
  route(
    app,
    {
      ...doorbell,
      method: 'POST',
      url: '/api/v1/endpoints/:ref/doorbell-tests',
      summary: 'Start a doorbell self-test of an endpoint.',
      params: refParams,
      body: startDoorbellTestInput,
      answers: { 201: doorbellTestStartedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return reply.status(201).send(await startOwnedTest(deps, human.id, request.params.ref, request.body, now()));
    },
  );
  route(
    app,
    {
      ...doorbell,
      method: 'GET',
      url: '/api/v1/endpoints/:ref/doorbell-tests/:test_id',
      summary: 'Read a doorbell self-test: each step and its verdict.',
      params: testParams,
      answers: { 200: doorbellReportOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return getOwnedTest(deps, human.id, request.params.ref, request.params.test_id);
    },
  );
}
