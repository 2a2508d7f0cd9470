// The HTTP host: the one Fastify app every surface registers its routes on (from
// src/main.ts). It owns what they share: the limits, the error mapping, the security
// headers (HSTS when the public URL is https), the guard against characters PostgreSQL
// cannot store, the request log, cookies, and the operator routes (health, readiness,
// /metrics). The surfaces (api/, mcp/, board/) are siblings on it.

import cookie from '@fastify/cookie';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerFactory,
} from 'fastify';
import { invalidArgument } from '../domain/errors.js';
import { UNSTORABLE_MESSAGE, unstorableField } from '../domain/unstorable.js';
import type { Metrics } from '../metrics/index.js';
import type { LatencyHistograms } from '../metrics/latency.js';
import { limitConnections, serverTimeouts, type ConnectionLimits } from './connections.js';
import { errorBody, handleError, routerError } from './errors.js';
import { hostAllowed, hostExempt } from './hosts.js';
import { healthRoutes, type HealthDeps } from './health.js';
import { metricsRoute } from './metrics-route.js';
import { requestId, requestLog } from './request-log.js';
import { traceRequests } from './tracing.js';
import { NO_TRACING, type Tracing } from '../tracing/index.js';

/** 1 MiB: the largest todo (64 KiB body + 256 KiB payload) with room for JSON overhead. */
export const BODY_LIMIT = 1024 * 1024;

/**
 * 8 MiB on the one route that takes a bulk create (POST /api/v1/endpoints/{ref}/todos):
 * its 1,000 items at 8 KiB each on average. A bulk of full-size todos does not fit and is
 * sent in smaller batches; more would let one request hold tens of MiB of parsed JSON.
 */
export const BULK_BODY_LIMIT = 8 * 1024 * 1024;

export interface HostOptions {
  log: FastifyBaseLogger;
  /** Proxy addresses or CIDRs whose X-Forwarded-* headers are believed; empty: none. */
  trustProxy: string[];
  /** serve: the app runs on the HTTP server that listened while the start waited (http/early.ts). */
  serverFactory?: FastifyServerFactory;
  /** SWITCHBOARD_PUBLIC_URL: when it is https, every answer carries Strict-Transport-Security. */
  publicUrl?: string;
  /** The Host names served (config.allowedHosts); null: any. */
  allowedHosts: readonly string[] | null;
  /** SWITCHBOARD_METRICS_TOKEN is set: /metrics is exempt from the Host check (its bearer guards it). */
  metricsTokenSet?: boolean;
  /** The process's latency histograms: every answer is timed into them (request-log.ts). */
  latency?: LatencyHistograms;
  /** The instance's traces: a span per request (http/tracing.ts); absent: off. */
  tracing?: Tracing;
  /** The deadlines for receiving a request and the connections per address (http/connections.ts). */
  connections: ConnectionLimits;
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
    // Receiving a request has a deadline; answering it does not (docs/design/limits.md,
    // "Slow clients"). Fastify's default, none, let a trickled body hold a connection.
    requestTimeout: deps.connections.requestTimeoutMs,
    http: serverTimeouts(deps.connections),
    // The router's own refusals (a malformed percent-encoding, a path parameter over 100
    // characters) come before any route: without this they answer in Fastify's shape (the
    // latter as 414), not the API's error body.
    frameworkErrors: routerError,
  });
  limitConnections(app.server, deps.connections, deps.trustProxy);
  app.setErrorHandler(handleError);
  // First of the hooks, so the Host check, the guards and the handler all run in the span.
  const tracing = deps.tracing ?? NO_TRACING;
  traceRequests(app, tracing);
  // DNS rebinding (docs/design/limits.md, "Host and Origin"): a Host this server does not
  // go by is refused before any handler, body parser or authentication runs. Health
  // probes are exempt: they carry nothing, and a prober addresses the pod, not the name;
  // so is a token-guarded /metrics, for the same scraper.
  const metricsTokenSet = deps.metricsTokenSet ?? false;
  app.addHook('onRequest', async (request, reply) => {
    if (hostAllowed(deps.allowedHosts, request.headers.host) || hostExempt(request.url, metricsTokenSet)) return;
    return reply
      .status(421)
      .send(errorBody('forbidden', `Host: this server does not answer for "${request.headers.host ?? ''}"`));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
  // An https public URL means browsers only ever reach this server over TLS (directly or
  // through a proxy): HSTS tells them never to try plain http, for a year.
  const hsts = deps.publicUrl?.startsWith('https:') ?? false;
  app.addHook('onSend', async (_request, reply) => {
    void reply.header('X-Content-Type-Options', 'nosniff');
    void reply.header('Cache-Control', 'no-store');
    if (hsts) void reply.header('Strict-Transport-Security', 'max-age=31536000');
  });
  // U+0000 and unpaired surrogates can never be stored (src/domain/unstorable.ts): the API
  // refuses them in path parameters, query strings and JSON bodies before any use case
  // passes them to a query.
  app.addHook('preHandler', async (request) => {
    if (!request.url.startsWith('/api/') && !request.url.startsWith('/webhooks/')) return;
    const inputs: [string, unknown][] = [
      ['', request.params],
      ['', request.query],
      ...(request.url.startsWith('/api/') ? [['body', request.body] as [string, unknown]] : []),
    ];
    for (const [whole, input] of inputs) {
      const field = unstorableField(input);
      if (field !== null) throw invalidArgument(field || whole, UNSTORABLE_MESSAGE);
    }
  });
  requestLog(app, deps.latency, tracing);
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
