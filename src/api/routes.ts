// The /api/v1 surface (and /webhooks, /ws): registers its routes on the HTTP host from the
// services. It imports the host (src/http/) and the use cases, never another surface.

import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/auth.js';
import type { Services } from '../services.js';
import { admissionRoutes } from './admission-routes.js';
import { doorbellRoutes } from './doorbell-routes.js';
import { endpointRoutes, ingestRoutes } from './endpoint-routes.js';
import { hookRoutes } from './hook-routes.js';
import { identityRoutes } from './identity-routes.js';
import { messageRoutes } from './message-routes.js';
import { presenceRoutes } from './presence-routes.js';
import { wsRoutes } from './ws.js';

export function apiRoutes(app: FastifyInstance, services: Services, auth: Auth): void {
  const { identity, messages, metrics, clock: now } = services;
  const defaultLeaseSeconds = services.config.todos.defaultLeaseSeconds;
  identityRoutes(app, identity, auth, now);
  endpointRoutes(app, { ...identity, defaultLeaseSeconds, metrics, credentials: services.credentials }, auth, now);
  ingestRoutes(app, { pool: services.pool, defaultLeaseSeconds, metrics }, auth);
  admissionRoutes(app, identity, auth);
  doorbellRoutes(app, identity, auth, now);
  messageRoutes(app, messages, auth);
  wsRoutes(app, { ...identity, messages, syntheticAdmin: services.syntheticAdmin, bus: services.bus });
  hookRoutes(app, { ...identity, guard: services.hookGuard }, auth);
  presenceRoutes(app, identity, auth);
}
