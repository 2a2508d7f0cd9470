// MCP session use cases over the mcp_sessions registry: open on initialize, find (and
// stamp as seen) on every request, mark the notification stream, close, list. Every call
// is scoped by the caller's endpoint: another endpoint's session is "not there".
// Closing releases the session's claims in the same statement (store/sessions.ts); idle
// expiry is the idle_sessions sweep, revoke is the endpoint's (it dead-letters instead).

import type { Queryable } from '../db/pool.js';
import * as store from '../store/sessions.js';
import { reopenQueue } from '../budgets/reopen.js';
import type { CredentialForgetting } from '../endpoints/credentials.js';

export type { McpSession } from '../store/sessions.js';

export interface SessionDeps {
  db: Queryable;
  /** This process, as recorded on the sessions it mints and the streams it holds. */
  instanceId: string;
  /** The credential answers this process reuses: a close drops the session's at once. */
  credentials?: CredentialForgetting;
}

/** Client-supplied text is stored trimmed to this many characters: enough to recognise a client. */
const CLIENT_TEXT_CHARS = 200;

function clientText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const clean = value.split('\u0000').join('').trim();
  return clean === '' ? null : [...clean].slice(0, CLIENT_TEXT_CHARS).join('');
}

export async function openSession(
  deps: SessionDeps,
  a: { endpointId: string; id: string; clientInfo: { name?: unknown; version?: unknown } | null },
): Promise<store.McpSession> {
  return store.insertSession(deps.db, {
    endpointId: a.endpointId,
    id: a.id,
    clientName: clientText(a.clientInfo?.name),
    clientVersion: clientText(a.clientInfo?.version),
    instance: deps.instanceId,
  });
}

/** The live session, stamped as seen; null when unknown, of another endpoint, or closed. */
export function markStream(deps: SessionDeps, endpointId: string, id: string, open: boolean): Promise<void> {
  return store.setStreamOpen(deps.db, { endpointId, id, instance: deps.instanceId, open });
}

export async function closeSession(
  deps: SessionDeps,
  endpointId: string,
  id: string,
): Promise<store.ClosedSession | null> {
  const closed = await store.closeSession(deps.db, endpointId, id);
  deps.credentials?.forget(endpointId, id);
  // A released claim a budget admitted may free its queue's slot, as the release verb's does.
  for (const queue of closed?.policy_queues ?? []) await reopenQueue(deps.db, endpointId, queue);
  return closed;
}

export function listSessions(deps: SessionDeps, endpointId: string): Promise<store.McpSession[]> {
  return store.listLiveSessions(deps.db, endpointId);
}
