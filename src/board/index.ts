// The board surface: every page and its live stream, sign-in and setup, registered on the
// HTTP host from the services in the board's own Fastify context (the one that parses
// HTML forms: /api/v1 takes JSON alone, so a cross-site form can never drive the API).

import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/auth.js';
import type { Services } from '../services.js';
import { assetRoutes } from './assets.js';
import { budgetPages } from './budgets.js';
import { docsPages } from './docs.js';
import { endpointActions } from './endpoint-actions.js';
import { messagePages } from './messages.js';
import type { MessageDeps } from '../messages/context.js';
import { endpointPages } from './endpoints.js';
import { eventRoutes, type EventDeps } from './events.js';
import { queuePages } from './queues.js';
import { sessionPages } from './session.js';
import { sessionPage } from './session-page.js';
import { setupPages } from './setup.js';
import { settingsPage, type SettingsView } from './settings.js';
import { wizardPages } from './wizard.js';

export type { EventDeps as BoardDeps } from './events.js';

/**
 * Only the board's own files run or style a page, nothing may frame it (its buttons
 * revoke credentials), and forms post only back here: a title an agent wrote that slipped
 * past escaping still could not run.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // htmx writes style attributes while it swaps; style elements still come only from here.
  "style-src-attr 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** The security headers of every board response in this context (pages, forms, files). */
export function boardHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    void reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    void reply.header('X-Frame-Options', 'DENY');
    void reply.header('Referrer-Policy', 'same-origin');
  });
}

/** Registers the board (its own context: form parsing and the board's headers) on the host. */
export function boardRoutes(app: FastifyInstance, services: Services, auth: Auth): void {
  const { identity, syntheticAdmin, metrics } = services;
  void app.register(async (board) => {
    await board.register(formbody);
    boardHeaders(board);
    setupPages(board, identity, auth);
    sessionPages(board, identity, auth);
    docsPages(board, identity.publicUrl);
    boardPages(board, {
      identity: { ...identity, syntheticAdmin },
      operator: {
        ...identity,
        defaultLeaseSeconds: services.config.todos.defaultLeaseSeconds,
        metrics,
        credentials: services.credentials,
      },
      now: services.clock,
      pollMs: services.config.board.pollMs,
      log: services.log,
      bus: services.bus,
      settings: { retentionMs: services.config.sweeps.retentionMs },
      messages: services.messages,
    });
  });
}

function boardPages(app: FastifyInstance, deps: EventDeps & { settings: SettingsView; messages: MessageDeps }): void {
  assetRoutes(app);
  queuePages(app, deps);
  endpointPages(app, deps);
  budgetPages(app, deps);
  endpointActions(app, deps);
  wizardPages(app, deps);
  sessionPage(app, deps);
  messagePages(app, deps);
  settingsPage(app, deps);
  eventRoutes(app, deps);
}
