// What the message queue use cases need, and who is acting. Surfaces build an Actor from
// the authenticated caller; provenance (queued_by) is derived from it and from nothing
// a client sends.

import type { Pool } from '../db/pool.js';
import { AppError } from '../domain/errors.js';
import type { QueuedBy } from '../domain/messages.js';
import type { Metrics } from '../metrics/index.js';
import type { MessageCounters } from '../metrics/messages.js';
import { findOwnedSession, type SessionRef } from '../store/messages.js';
import type { CapacitySetting } from './capacity.js';

export interface MessageDeps {
  db: Pool;
  capacity: CapacitySetting;
  /** Counted after commit; absent in tests that do not read metrics. */
  metrics?: Metrics;
}

/**
 * A caller of the queue: a human (board, API, CLI), a workflow token of a human, or an
 * endpoint over MCP. Each may touch only sessions of endpoints its human owns; an agent
 * reaches another endpoint's sessions only when that endpoint accepts agent messages.
 */
export type Actor =
  | { kind: 'user'; humanId: string }
  | { kind: 'workflow'; humanId: string; tokenId: string }
  | { kind: 'agent'; humanId: string; endpointId: string; endpointSlug: string };

export interface Provenance {
  queuedBy: QueuedBy;
  senderId: string;
  /** Kept with the row: an agent's message carries its endpoint's slug, named in the delivery's meta. */
  metadata?: Record<string, unknown>;
}

export function provenanceOf(actor: Actor): Provenance {
  switch (actor.kind) {
    case 'user':
      return { queuedBy: 'user', senderId: actor.humanId };
    case 'workflow':
      return { queuedBy: 'workflow', senderId: actor.tokenId };
    case 'agent':
      return { queuedBy: 'agent', senderId: actor.endpointId, metadata: { from_endpoint: actor.endpointSlug } };
  }
}

/** The one answer for a session the caller cannot act on: unknown, closed or another human's. */
export function sessionNotFound(): AppError {
  return new AppError('not_found', 'Session not found');
}

export function entryNotFound(id: string): AppError {
  return new AppError('entry_not_found', `entry_id: no pending message ${id} in this session`, {
    field: 'entry_id',
    entry_id: id,
  });
}

/**
 * The named session, authorised for this actor, or NOT_FOUND "Session not found". An agent
 * acting on a session of another endpoint of its owner needs that endpoint to accept agent
 * messages (an owner's opt-in, off by default): else `forbidden`, saying so. The owner's own
 * endpoints are no secret from each other, so this is no oracle; its own endpoint's sessions
 * (competing consumers of the same agent) are always open to it.
 */
export async function authorise(deps: MessageDeps, actor: Actor, sessionId: string): Promise<SessionRef> {
  const found = await findOwnedSession(deps.db, actor.humanId, sessionId);
  if (!found) throw sessionNotFound();
  const { acceptAgentMessages, ...ref } = found;
  if (actor.kind === 'agent' && ref.endpointId !== actor.endpointId && !acceptAgentMessages) {
    throw new AppError(
      'forbidden',
      "session_id: that session's endpoint does not accept messages from other agents; its owner can turn on " +
        'accept_agent_messages for it (API, CLI `switchboard endpoint set`, or the board)',
      { field: 'session_id', reason: 'agent_messages_not_accepted' },
    );
  }
  return ref;
}

export function countersOf(deps: MessageDeps): MessageCounters | null {
  return deps.metrics?.messages ?? null;
}
