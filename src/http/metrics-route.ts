// GET /metrics: the process registry in Prometheus text. With a metrics token configured
// it answers only `Authorization: Bearer <that token>`; anything else — no header, a
// wrong token, an endpoint credential, an API token, a board cookie — is 401 with an
// empty body, so the route says nothing about which credentials exist.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/index.js';
import { bearerOf } from './auth.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

export function metricsRoute(app: FastifyInstance, deps: { metrics: Metrics; token: string | null }): void {
  const expected = deps.token === null ? null : digest(deps.token);
  app.get('/metrics', async (request, reply) => {
    if (expected) {
      const offered = bearerOf(request);
      if (offered === null || !timingSafeEqual(digest(offered), expected)) return reply.status(401).send();
    }
    return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
}
