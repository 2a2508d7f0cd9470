// The /api/v1 surface (and /webhooks, /ws, and OAuth's /oauth and /.well-known): registers its routes on the HTTP host from the
// services. It imports the host (src/http/) and the use cases, never another surface.

import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/auth.js';
import type { Services } from '../services.js';
import { admissionRoutes } from './admission-routes.js';
import { bulkRoutes } from './bulk-routes.js';
import { doorbellRoutes } from './doorbell-routes.js';
import { endpointRoutes, ingestRoutes } from './endpoint-routes.js';
import { eventRoutes } from './event-routes.js';
import { RateLimiter } from '../http/rate-limit.js';
import { ruleRoutes } from './rule-routes.js';
import { grantRoutes } from './grant-routes.js';
import { hookRoutes } from './hook-routes.js';
import { humanRoutes } from './human-routes.js';
import { identityRoutes } from './identity-routes.js';
import { messageRoutes } from './message-routes.js';
import { oauthRoutes } from './oauth-routes.js';
import { presenceRoutes } from './presence-routes.js';
import { scheduleRoutes } from './schedule-routes.js';
import { todoRoutes } from './todo-routes.js';
import { wsRoutes } from './ws.js';

export function apiRoutes(app: FastifyInstance, services: Services, auth: Auth): void {
  const { identity, messages, metrics, clock: now } = services;
  const { defaultLeaseSeconds, idempotencyWindowSeconds } = services.config.todos;
  identityRoutes(app, identity, auth, now);
  humanRoutes(app, identity, auth);
  const operator = {
    ...identity,
    defaultLeaseSeconds,
    idempotencyWindowSeconds,
    metrics,
    credentials: services.credentials,
    keyring: services.keyring,
  };
  endpointRoutes(app, operator, auth, now);
  todoRoutes(app, operator, auth, now);
  bulkRoutes(app, operator, auth);
  const intake = {
    pool: services.pool,
    defaultLeaseSeconds,
    idempotencyWindowSeconds,
    metrics,
    quotas: services.config.quotas,
    tracing: services.tracing,
    keyring: services.keyring,
    routing: services.config.routing,
    workOrderSeconds: services.config.routing.workOrderSeconds,
  };
  // Per webhook and per instance, like the API's limits (docs/design/intake.md, "Limits and metrics").
  const perWebhook = new RateLimiter(services.config.webhooks.perWebhook);
  ingestRoutes(
    app,
    {
      ...intake,
      nowSeconds: () => Math.floor(now().getTime() / 1000),
      limit: (webhookId) => perWebhook.check(webhookId, now().getTime()).waitSeconds,
    },
    auth,
  );
  eventRoutes(app, { ...identity, ...intake, secretGraceSeconds: services.config.webhooks.secretGraceSeconds }, auth);
  ruleRoutes(app, { ...intake, db: services.pool }, auth);
  grantRoutes(app, { db: services.pool }, auth);
  admissionRoutes(app, identity, auth);
  doorbellRoutes(app, identity, auth, now);
  messageRoutes(app, messages, auth);
  wsRoutes(app, {
    ...identity,
    messages,
    syntheticAdmin: services.syntheticAdmin,
    bus: services.bus,
    socketLimit: services.config.api.perSocket,
    socketsPerHuman: services.config.api.socketsPerHuman,
    allowedOrigins: services.config.allowedOrigins,
    tracing: services.tracing,
  });
  hookRoutes(app, { ...identity, guard: services.hookGuard, keyring: services.keyring }, auth);
  presenceRoutes(app, identity, auth);
  scheduleRoutes(app, identity, auth, now);
  const { oauth, quotas, publicUrl } = services.config;
  const { registerLimit, ...tokens } = oauth;
  oauthRoutes(
    app,
    { db: services.pool, publicUrl, ...tokens, credentials: services.credentials, quotas },
    { register: registerLimit, perIp: services.config.api.perIp },
    now,
  );
}
