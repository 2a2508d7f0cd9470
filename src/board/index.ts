// The board surface: every page and its live stream, sign-in and setup, registered on the
// HTTP host from the services in the board's own Fastify context (the one that parses
// HTML forms: /api/v1 takes JSON alone, so a cross-site form can never drive the API).

import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/auth.js';
import type { Services } from '../services.js';
import { assetRoutes } from './assets.js';
import { budgetPages } from './budgets.js';
import { bulkPages } from './bulk.js';
import { cliLoginPages } from './cli-login.js';
import { docsPages } from './docs.js';
import { endpointActions } from './endpoint-actions.js';
import { endpointEditPages } from './endpoint-edit.js';
import { messagePages } from './messages.js';
import { oauthPages } from './oauth.js';
import type { MessageDeps } from '../messages/context.js';
import { endpointPages } from './endpoints.js';
import { findPages } from './find.js';
import { grantPages } from './grants.js';
import { eventRoutes, type EventDeps } from './events.js';
import { queueChartPages } from './queue-charts.js';
import { peoplePages } from './people.js';
import { queuePages } from './queues.js';
import { routingPages } from './quarantine.js';
import { needsYouPages } from './needs-you.js';
import { receivedPages } from './received.js';
import { schedulePages } from './schedules.js';
import { sessionPages } from './session.js';
import { sessionPage } from './session-page.js';
import { setupPages } from './setup.js';
import { settingsPage, type SettingsView } from './settings.js';
import { webhookPages, type IntakeDeps } from './webhooks.js';
import { wizardPages } from './wizard.js';
import { boardHeaders } from './headers.js';

export type { EventDeps as BoardDeps } from './events.js';
export { CONTENT_SECURITY_POLICY } from './headers.js';

/** Registers the board (its own context: form parsing and the board's headers) on the host. */
export function boardRoutes(app: FastifyInstance, services: Services, auth: Auth): void {
  const { identity, syntheticAdmin, metrics } = services;
  void app.register(async (board) => {
    await board.register(formbody);
    boardHeaders(board);
    setupPages(board, identity, auth);
    sessionPages(board, identity, auth, services.oidc);
    docsPages(board, identity.publicUrl);
    const operator = {
      ...identity,
      defaultLeaseSeconds: services.config.todos.defaultLeaseSeconds,
      idempotencyWindowSeconds: services.config.todos.idempotencyWindowSeconds,
      metrics,
      credentials: services.credentials,
    };
    const deps = {
      identity: { ...identity, syntheticAdmin },
      operator,
      // Webhooks and replay also seal signing secrets and keep a replaced one through its grace.
      intake: {
        ...operator,
        keyring: services.keyring,
        secretGraceSeconds: services.config.webhooks.secretGraceSeconds,
        // The quarantine's release and the rules pages decide as ingest does.
        routing: services.config.routing,
        workOrderSeconds: services.config.routing.workOrderSeconds,
      },
      now: services.clock,
      pollMs: services.config.board.pollMs,
      log: services.log,
      bus: services.bus,
      settings: { retentionMs: services.config.sweeps.retentionMs },
      messages: services.messages,
    };
    boardPages(board, deps);
    needsYouPages(board, deps);
    peoplePages(board, deps, auth);
    cliLoginPages(board, deps);
    const { oauth, quotas } = services.config;
    oauthPages(board, deps, {
      db: services.pool,
      publicUrl: identity.publicUrl,
      ...oauth,
      credentials: services.credentials,
      quotas,
    });
  });
}

function boardPages(
  app: FastifyInstance,
  deps: EventDeps & { settings: SettingsView; messages: MessageDeps; intake: IntakeDeps },
): void {
  assetRoutes(app);
  findPages(app, deps);
  queuePages(app, deps);
  queueChartPages(app, deps);
  bulkPages(app, deps);
  endpointPages(app, deps);
  budgetPages(app, deps);
  schedulePages(app, deps);
  webhookPages(app, deps);
  grantPages(app, deps);
  receivedPages(app, deps);
  routingPages(app, deps);
  endpointActions(app, deps);
  endpointEditPages(app, deps);
  wizardPages(app, deps);
  sessionPage(app, deps);
  messagePages(app, deps);
  settingsPage(app, deps);
  eventRoutes(app, deps);
}
