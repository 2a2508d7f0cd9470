// The HTTP server: one Fastify instance carrying every surface. This file sets the
// limits and the error mapping they share and registers each surface's routes.

import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerFactory,
} from 'fastify';
import type { Pool } from '../db/pool.js';
import { boardHeaders, boardPages } from '../board/index.js';
import { sessionPages } from '../board/session.js';
import { setupPages } from '../board/setup.js';
import { mcpRoutes } from '../mcp/server.js';
import type { Principal } from '../identity/principal.js';
import { admissionRoutes } from './admission-routes.js';
import { createAuth } from './auth.js';
import { doorbellRoutes } from './doorbell-routes.js';
import { endpointRoutes, ingestRoutes } from './endpoint-routes.js';
import { hookRoutes } from './hook-routes.js';
import { presenceRoutes } from './presence-routes.js';
import { HookGuard } from '../hooks/guard.js';
import { errorBody, handleError, routerError } from './errors.js';
import { invalidArgument } from '../domain/errors.js';
import { nulField } from '../domain/nul.js';
import { healthRoutes, type HealthDeps } from './health.js';
import { identityRoutes } from './identity-routes.js';
import { metricsRoute } from './metrics-route.js';
import { requestId, requestLog } from './request-log.js';
import type { Metrics } from '../metrics/index.js';
import { CapacitySetting } from '../messages/capacity.js';
import type { MessageDeps } from '../messages/context.js';
import { messageRoutes } from './message-routes.js';
import { wsRoutes } from './ws.js';
import type { Bus } from '../domain/events.js';

/** 1 MiB: the largest todo (64 KiB body + 256 KiB payload) with room for JSON overhead. */
export const BODY_LIMIT = 1024 * 1024;

export interface HttpDeps extends HealthDeps {
  log: FastifyBaseLogger;
  pool: Pool;
  publicUrl: string;
  defaultLeaseSeconds: number;
  syntheticAdmin: Principal | null;
  /** The process registry; without it there is no /metrics (most tests). */
  metrics?: Metrics;
  /** The bearer /metrics requires; null or absent: open. */
  metricsToken?: string | null;
  /** Proxy addresses or CIDRs whose X-Forwarded-* headers are believed; unset or empty: none. */
  trustProxy?: string[];
  /** Recorded on the MCP sessions and streams this process holds; tests may leave it out. */
  instanceId?: string;
  /** The LISTEN/NOTIFY bus; without it, closes on other instances end no stream here. */
  bus?: Bus;
  /** How long /mcp reuses a (credential, live session) answer (endpoints/credentials.ts); tests lengthen it. */
  credentialReuseMs?: number;
  /** Told when an MCP notification stream opens on this instance (ring-on-attach). */
  onStreamOpen?: (endpointId: string, sessionId: string) => void;
  /** Told when an MCP notification stream on this instance closes. */
  onStreamClose?: (endpointId: string, sessionId: string) => void;
  /** The session message queue (capacity setting included); tests may leave it out. */
  messages?: MessageDeps;
  /** How often an open board stream re-reads its view; default 1 s. */
  boardPollMs?: number;
  /** Shown read-only on the board's settings page. */
  retentionMs?: number;
  now?: () => Date;
  /** The SSRF guard of notify hooks (configured allow-list); absent: https only, no private targets. */
  hookGuard?: HookGuard;
  /** serve: the app runs on the HTTP server that listened while the start waited (api/early.ts). */
  serverFactory?: FastifyServerFactory;
}

export function buildHttp(deps: HttpDeps): FastifyInstance {
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
    trustProxy: deps.trustProxy && deps.trustProxy.length > 0 ? deps.trustProxy.join(',') : false,
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

  const now = deps.now ?? (() => new Date());
  const identity = { db: deps.pool, publicUrl: deps.publicUrl };
  const auth = createAuth({ ...identity, syntheticAdmin: deps.syntheticAdmin, nowMs: () => now().getTime() });
  healthRoutes(app, deps);
  if (deps.metrics) metricsRoute(app, { metrics: deps.metrics, token: deps.metricsToken ?? null });
  identityRoutes(app, identity, auth, now);
  const counted = deps.metrics ? { metrics: deps.metrics } : {};
  endpointRoutes(app, { ...identity, defaultLeaseSeconds: deps.defaultLeaseSeconds, ...counted }, auth, now);
  ingestRoutes(app, { pool: deps.pool, defaultLeaseSeconds: deps.defaultLeaseSeconds, ...counted }, auth);
  admissionRoutes(app, identity, auth);
  doorbellRoutes(app, identity, auth, now);
  const messages = deps.messages ?? {
    db: deps.pool,
    capacity: new CapacitySetting({ db: deps.pool, envCapacity: null }),
    ...counted,
  };
  messageRoutes(app, messages, auth);
  wsRoutes(app, { ...identity, messages, syntheticAdmin: deps.syntheticAdmin, ...(deps.bus ? { bus: deps.bus } : {}) });
  const hookGuard = deps.hookGuard ?? new HookGuard({ allowHttp: false, allowCidrs: [] });
  hookRoutes(app, { ...identity, guard: hookGuard }, auth);
  presenceRoutes(app, identity, auth);
  // HTML forms are parsed only in the board's own context: /api/v1 takes JSON alone, so
  // a cross-site form (no CORS preflight) can never drive the API.
  void app.register(async (board) => {
    await board.register(formbody);
    boardHeaders(board);
    setupPages(board, identity, auth);
    sessionPages(board, identity, auth);
    const operator = { ...identity, defaultLeaseSeconds: deps.defaultLeaseSeconds, ...counted };
    boardPages(board, {
      identity: { ...identity, syntheticAdmin: deps.syntheticAdmin },
      operator,
      now,
      pollMs: deps.boardPollMs ?? 1000,
      log: deps.log,
      ...(deps.bus ? { bus: deps.bus } : {}),
      settings: deps.retentionMs === undefined ? {} : { retentionMs: deps.retentionMs },
      messages,
    });
  });
  mcpRoutes(app, {
    db: deps.pool,
    defaultLeaseSeconds: deps.defaultLeaseSeconds,
    ...counted,
    instanceId: deps.instanceId ?? `unnamed-${randomBytes(3).toString('hex')}`,
    version: deps.version,
    log: deps.log,
    ...(deps.bus ? { bus: deps.bus } : {}),
    ...(deps.credentialReuseMs === undefined ? {} : { credentialReuseMs: deps.credentialReuseMs }),
    ...(deps.onStreamOpen ? { onStreamOpen: deps.onStreamOpen } : {}),
    ...(deps.onStreamClose ? { onStreamClose: deps.onStreamClose } : {}),
    messages,
    hookGuard,
  });
  return app;
}
