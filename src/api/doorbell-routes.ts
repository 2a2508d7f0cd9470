// /api/v1 routes for doorbell self-tests (docs/design/doorbell-acknowledgement.md): a
// signed-in human starts and reads a test of one of their own endpoints.
// `switchboard doctor` is their client.

import type { FastifyInstance } from 'fastify';
import { getOwnedTest, startOwnedTest, type OperatorTestDeps } from '../endpoints/doorbell-tests.js';
import type { Auth } from '../http/auth.js';

type RefParams = { Params: { ref: string } };
type TestParams = { Params: { ref: string; test_id: string } };

export function doorbellRoutes(app: FastifyInstance, deps: OperatorTestDeps, auth: Auth, now: () => Date): void {
  app.post<RefParams>('/api/v1/endpoints/:ref/doorbell-tests', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return reply.status(201).send(await startOwnedTest(deps, human.id, request.params.ref, request.body, now()));
  });
  app.get<TestParams>('/api/v1/endpoints/:ref/doorbell-tests/:test_id', async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return getOwnedTest(deps, human.id, request.params.ref, request.params.test_id);
  });
}
