// The HTTP host: the one Fastify app every surface registers its routes on (from
// src/main.ts). It owns what they share: the limits, the error mapping, the security
// headers, the NUL guard, the request log, cookies, and the operator routes (health,
// readiness, /metrics). The surfaces (api/, mcp/, board/) are siblings on it.

import cookie from '@fastify/cookie';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerFactory,
} from 'fastify';
import { invalidArgument } from '../domain/errors.js';
import { nulField } from '../domain/nul.js';
import type { Metrics } from '../metrics/index.js';
import { errorBody, handleError, routerError } from './errors.js';
import { healthRoutes, type HealthDeps } from './health.js';
import { metricsRoute } from './metrics-route.js';
import { requestId, requestLog } from './request-log.js';

/** 1 MiB: the largest todo (64 KiB body + 256 KiB payload) with room for JSON overhead. */
export const BODY_LIMIT = 1024 * 1024;

export interface HostOptions {
  log: FastifyBaseLogger;
  /** Proxy addresses or CIDRs whose X-Forwarded-* headers are believed; empty: none. */
  trustProxy: string[];
  /** serve: the app runs on the HTTP server that listened while the start waited (http/early.ts). */
  serverFactory?: FastifyServerFactory;
}

/** The Fastify app with the shared limits, error mapping and hooks; no routes yet. */
export function createHost(deps: HostOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: BODY_LIMIT,
    // Fastify's two lines per request (received, completed) are replaced by one compact
    // line from request-log.ts.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestId,
    requestIdHeader: false,
    // Streams (MCP notifications, SSE) stay open; shutdown closes them explicitly.
    forceCloseConnections: 'idle',
    // X-Forwarded-For/-Proto are believed only from the configured proxies: from anyone
    // else they would let a client pick its own address and dodge the rate limits.
    trustProxy: deps.trustProxy.length > 0 ? deps.trustProxy.join(',') : false,
    ...(deps.serverFactory ? { serverFactory: deps.serverFactory } : {}),
    // The router's own refusals (a malformed percent-encoding, a path parameter over 100
    // characters) come before any route: without this they answer in Fastify's shape (the
    // latter as 414), not the API's error body.
    frameworkErrors: routerError,
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
  app.addHook('onSend', async (_request, reply) => {
    void reply.header('X-Content-Type-Options', 'nosniff');
    void reply.header('Cache-Control', 'no-store');
  });
  // U+0000 can never be stored (PostgreSQL text and jsonb refuse it): the API refuses it in
  // path parameters, query strings and JSON bodies before any use case passes it to a query.
  app.addHook('preHandler', async (request) => {
    if (!request.url.startsWith('/api/') && !request.url.startsWith('/webhooks/')) return;
    const inputs: [string, unknown][] = [
      ['', request.params],
      ['', request.query],
      ...(request.url.startsWith('/api/') ? [['body', request.body] as [string, unknown]] : []),
    ];
    for (const [whole, input] of inputs) {
      const field = nulField(input);
      if (field !== null) throw invalidArgument(field || whole, 'must not contain NUL characters');
    }
  });
  requestLog(app);
  void app.register(cookie);
  return app;
}

export interface OperatorDeps extends HealthDeps {
  metrics: Metrics;
  /** The bearer /metrics requires; null: open. */
  metricsToken: string | null;
}

/** The operator routes of the host: /healthz, /readyz, /version, /metrics. */
export function operatorRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  healthRoutes(app, deps);
  metricsRoute(app, { metrics: deps.metrics, token: deps.metricsToken });
}
