// The message queue tests' world: humans, endpoints and live MCP session rows made
// through the stores, the use cases' deps with a capacity setting of their own, a LISTEN
// client that records every `message_ready` notice, and readers of the stored rows.

import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import pg from 'pg';
import type { Pool } from '../../src/db/pool.js';
import { newId, newSessionId } from '../../src/domain/ids.js';
import { CapacitySetting } from '../../src/messages/capacity.js';
import type { Actor, MessageDeps } from '../../src/messages/context.js';
import { addServerMessage } from '../../src/messages/queue.js';
import { insertEndpoint } from '../../src/store/endpoints.js';
import { insertHuman } from '../../src/store/humans.js';
import { insertSession } from '../../src/store/sessions.js';

export interface Owner {
  humanId: string;
  endpointId: string;
  endpointSlug: string;
  sessionId: string;
}

/** A human with an endpoint and one live session of it. */
export async function owner(pool: Pool, role: 'admin' | 'member' = 'member'): Promise<Owner> {
  const tag = randomBytes(4).toString('hex');
  const human = await insertHuman(pool, { id: newId('hu'), email: `h-${tag}@example.test`, displayName: tag, role });
  const endpoint = await insertEndpoint(pool, {
    id: newId('ep'),
    humanId: human.id,
    name: `agent-${tag}`,
    slug: `agent-${tag}`,
    queues: ['inbox'],
    verbs: ['send_message', 'list_sessions'],
    defaultLeaseSeconds: null,
    expiresAt: null,
  });
  return {
    humanId: human.id,
    endpointId: endpoint.id,
    endpointSlug: endpoint.slug,
    sessionId: await session(pool, endpoint.id),
  };
}

/** Another live session of the endpoint. */
export async function session(pool: Pool, endpointId: string, instance = 'test-instance'): Promise<string> {
  const row = await insertSession(pool, {
    endpointId,
    id: newSessionId(),
    clientName: 'test',
    clientVersion: '1',
    instance,
  });
  return row.id;
}

export function depsOf(pool: Pool, envCapacity: number | null = null): MessageDeps {
  return { db: pool, capacity: new CapacitySetting({ db: pool, envCapacity }) };
}

export const user = (o: { humanId: string }): Actor => ({ kind: 'user', humanId: o.humanId });
export const agent = (o: Owner): Actor => ({
  kind: 'agent',
  humanId: o.humanId,
  endpointId: o.endpointId,
  endpointSlug: o.endpointSlug,
});
export const workflow = (o: Owner, tokenId = 'tk_test'): Actor => ({ kind: 'workflow', humanId: o.humanId, tokenId });
export const refOf = (o: Owner) => ({ endpointId: o.endpointId, sessionId: o.sessionId });

/** One row of each provenance, in the order user, agent, workflow, server. */
export async function oneOfEach(
  deps: MessageDeps,
  o: Owner,
  add: typeof import('../../src/messages/queue.js').addMessage,
) {
  const u = await add(deps, user(o), o.sessionId, { content: 'from the human' });
  const a = await add(deps, agent(o), o.sessionId, { content: 'from an agent' });
  const w = await add(deps, workflow(o), o.sessionId, { content: 'from a workflow' });
  const s = await addServerMessage(deps, refOf(o), 'from the server');
  return [u.entry.id, a.entry.id, w.entry.id, s.id];
}

export interface StoredRow {
  id: string;
  content: string;
  queued_by: string;
  sender_id: string | null;
  position: string;
  reserved_in_flight: boolean;
  queued_at: Date;
}

/** Every stored row of the session (in flight included), in queue order. */
export async function stored(pool: Pool, sessionId: string): Promise<StoredRow[]> {
  const res = await pool.query<StoredRow>(
    `SELECT id::text AS id, content, queued_by, sender_id, position::text AS position, reserved_in_flight, queued_at
       FROM queued_messages WHERE session_id = $1 ORDER BY position, queued_at`,
    [sessionId],
  );
  return res.rows;
}

/** Records every message_ready notice on the database, by session. */
export async function notices(url: string): Promise<{ count(sessionId: string): number; settle(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  // The file's database is dropped (FORCE) by an earlier-registered after hook.
  client.on('error', () => undefined);
  await client.connect();
  await client.query('LISTEN switchboard');
  const seen: string[] = [];
  client.on('notification', (msg) => {
    const event = JSON.parse(msg.payload ?? '{}') as { type?: string; session_id?: string };
    if (event.type === 'message_ready' && event.session_id) seen.push(event.session_id);
  });
  after(() => client.end());
  return {
    count: (sessionId) => seen.filter((s) => s === sessionId).length,
    // A round trip on the listening connection: notices committed before it have arrived.
    settle: async () => void (await client.query('SELECT 1')),
  };
}
