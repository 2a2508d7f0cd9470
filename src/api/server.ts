// The HTTP server: one Fastify instance carrying every surface. Surfaces register their
// routes here; this file only sets the limits and the error mapping they share.

import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { handleError } from './errors.js';
import { healthRoutes, type HealthDeps } from './health.js';

/** 1 MiB: the largest todo (64 KiB body + 256 KiB payload) with room for JSON overhead. */
export const BODY_LIMIT = 1024 * 1024;

export interface HttpDeps extends HealthDeps {
  log: FastifyBaseLogger;
}

export function buildHttp(deps: HttpDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: BODY_LIMIT,
    disableRequestLogging: true,
    // Streams (MCP notifications, SSE) stay open; shutdown closes them explicitly.
    forceCloseConnections: 'idle',
  });
  app.setErrorHandler(handleError);
  healthRoutes(app, deps);
  return app;
}
