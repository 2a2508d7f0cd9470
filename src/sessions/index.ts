// MCP session use cases over the mcp_sessions registry: open on initialize, find (and
// stamp as seen) on every request, mark the notification stream, close, list. Every call
// is scoped by the caller's endpoint: another endpoint's session is "not there".
// Closing releases the session's claims in the same statement (store/sessions.ts); idle
// expiry is the idle_sessions sweep, revoke is the endpoint's (it dead-letters instead).

import type { Queryable } from '../db/pool.js';
import * as store from '../store/sessions.js';
import { tagSession } from '../store/oauth.js';
import { AppError } from '../domain/errors.js';
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

/** What opening a session came to: opened, or the cap it met (`live` sessions already). */
export type OpenedSession = { ok: true } | { ok: false; live: number; max: number };

/**
 * Opens a session of the endpoint unless it already holds `maxLive` live ones, on any
 * instance (docs/design/mcp-surface.md, "Limits"): the count and the insert are one
 * statement under the endpoint's session lock, so a burst of initialize calls across
 * instances leaves exactly the cap.
 */
export async function openSession(
  deps: SessionDeps,
  a: {
    endpointId: string;
    id: string;
    clientInfo: { name?: unknown; version?: unknown } | null;
    /** Its initialize declared the claude/channel capability: the doorbell rings it. */
    channel: boolean;
    maxLive: number;
    /** The OAuth grant whose token opens it: revoking the grant closes it (docs/design/oauth.md). */
    oauthGrantId?: string;
  },
): Promise<OpenedSession> {
  const opened = await store.insertSessionUnderCap(deps.db, {
    endpointId: a.endpointId,
    id: a.id,
    clientName: clientText(a.clientInfo?.name),
    clientVersion: clientText(a.clientInfo?.version),
    instance: deps.instanceId,
    channel: a.channel,
    max: a.maxLive,
  });
  if (
    opened.opened &&
    a.oauthGrantId !== undefined &&
    !(await tagSession(deps.db, a.endpointId, a.id, a.oauthGrantId))
  ) {
    // The grant was revoked between the token's check and now: the session never was.
    await store.discardSession(deps.db, a.endpointId, a.id);
    throw new AppError('unauthenticated', 'the OAuth grant of this token was revoked');
  }
  return opened.opened ? { ok: true } : { ok: false, live: opened.live, max: a.maxLive };
}

/** Undoes openSession for a session whose initialize the MCP SDK refused before answering. */
export function discardSession(deps: SessionDeps, endpointId: string, id: string): Promise<void> {
  return store.discardSession(deps.db, endpointId, id);
}

/**
 * Records the session's stream open on this instance, or closed when this instance holds
 * it. `ifFree`: open only when no other instance holds it open (a reopen after this
 * instance was taken for dead must not take back a stream the client has since opened elsewhere).
 */
export function markStream(
  deps: SessionDeps,
  endpointId: string,
  id: string,
  open: boolean,
  ifFree = false,
): Promise<void> {
  return store.setStreamOpen(deps.db, { endpointId, id, instance: deps.instanceId, open, ifFree });
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
