// Rows and actors the todo tests need: a human, an endpoint with granted queues, and
// agents (sessions) of that endpoint.

import { randomBytes } from 'node:crypto';
import type { Pool } from '../../src/db/pool.js';
import { newId } from '../../src/domain/ids.js';
import { insertEndpoint, type Endpoint } from '../../src/store/endpoints.js';
import { insertHuman } from '../../src/store/humans.js';
import type { Agent, TodoDeps } from '../../src/todos/index.js';

export async function makeEndpoint(
  db: Pool,
  options: { queues?: string[]; defaultLeaseSeconds?: number } = {},
): Promise<Endpoint> {
  const tag = randomBytes(4).toString('hex');
  const human = await insertHuman(db, {
    id: newId('hu'),
    email: `h-${tag}@example.test`,
    displayName: tag,
    role: 'admin',
  });
  return insertEndpoint(db, {
    id: newId('ep'),
    humanId: human.id,
    name: `agent-${tag}`,
    slug: `agent-${tag}`,
    queues: options.queues ?? ['inbox'],
    verbs: [],
    defaultLeaseSeconds: options.defaultLeaseSeconds ?? null,
    expiresAt: null,
  });
}

export function agentOf(endpoint: Endpoint, sessionId = `s-${randomBytes(4).toString('hex')}`): Agent {
  return {
    endpointId: endpoint.id,
    sessionId,
    queues: endpoint.queues,
    defaultLeaseSeconds: endpoint.default_lease_seconds,
  };
}

export function depsOf(db: Pool, defaultLeaseSeconds = 300): TodoDeps {
  return { db, defaultLeaseSeconds };
}

/** Releases every waiter at once: a real barrier for racing connections. */
export function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return async () => {
    arrived += 1;
    if (arrived === count) open();
    await gate;
  };
}
