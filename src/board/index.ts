// The board: every page and its live stream, registered in the board's own Fastify
// context (the one that parses HTML forms). Sign-in and setup live beside it.

import type { FastifyInstance } from 'fastify';
import { assetRoutes } from './assets.js';
import { endpointPages } from './endpoints.js';
import { eventRoutes, type EventDeps } from './events.js';
import { queuePages } from './queues.js';
import { sessionPage } from './session-page.js';
import { wizardPages } from './wizard.js';

export type { EventDeps as BoardDeps } from './events.js';

export function boardPages(app: FastifyInstance, deps: EventDeps): void {
  assetRoutes(app);
  queuePages(app, deps);
  endpointPages(app, deps);
  wizardPages(app, deps);
  sessionPage(app, deps);
  eventRoutes(app, deps);
}
