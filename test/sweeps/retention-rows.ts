// Rows of the growing tables for the retention tests, dated in SQL: every `at` is an
// offset from the database's now() such as '-8 days' (in the past) or '1 hour' (ahead).

import { randomBytes } from 'node:crypto';
import type { Pool } from '../../src/db/pool.js';

const tag = () => randomBytes(6).toString('hex');
const hash = () => randomBytes(32);

export async function count(db: Pool, sql: string, params: unknown[]): Promise<number> {
  const res = await db.query<{ n: number }>(`SELECT count(*) AS n FROM ${sql}`, params);
  return res.rows[0]?.n ?? NaN;
}

export async function exists(db: Pool, table: string, where: string, params: unknown[]): Promise<boolean> {
  return (await count(db, `${table} WHERE ${where}`, params)) > 0;
}

/** A session opened a month ago; closed through the real UPDATE (its purge trigger runs) when closedAt is set. */
export async function session(db: Pool, endpointId: string, closedAt: string | null): Promise<string> {
  const id = `s-${tag()}`;
  await db.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, instance, created_at, last_seen_at)
     VALUES ($1, $2, 'test', now() - interval '30 days', now() - interval '30 days')`,
    [endpointId, id],
  );
  if (closedAt !== null)
    await db.query(`UPDATE mcp_sessions SET closed_at = now() + $3::interval WHERE endpoint_id = $1 AND id = $2`, [
      endpointId,
      id,
      closedAt,
    ]);
  return id;
}

/** A todo claimed by the session, its lease running. */
export async function claimedTodo(db: Pool, endpointId: string, sessionId: string): Promise<string> {
  const id = `td-${tag()}`;
  await db.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, state, attempt, claims, owner_session_id, claimed_at,
                        lease_expires_at, ready_at)
     VALUES ($1, $2, 'inbox', 'held', 'claimed', 1, 1, $3, now(), now() + interval '5 minutes',
             now() + interval '5 minutes')`,
    [endpointId, id, sessionId],
  );
  return id;
}

export async function queuedMessage(db: Pool, endpointId: string, sessionId: string): Promise<void> {
  await db.query(
    `INSERT INTO queued_messages (endpoint_id, id, session_id, position, content, queued_by, generation)
     VALUES ($1, gen_random_uuid(), $2, 1, 'hello', 'server', 0)`,
    [endpointId, sessionId],
  );
}

/** A board sign-in; returns its token hash. */
export async function boardSession(db: Pool, humanId: string, expiresAt: string): Promise<Buffer> {
  const h = hash();
  await db.query(
    `INSERT INTO board_sessions (token_hash, human_id, csrf_token, created_at, expires_at)
     VALUES ($1, $2, 'csrf', now() + $3::interval - interval '7 days', now() + $3::interval)`,
    [h, humanId, expiresAt],
  );
  return h;
}

/** An invite link of the human; returns its token hash. */
export async function setupToken(
  db: Pool,
  humanId: string,
  a: { usedAt: string | null; expiresAt: string },
): Promise<Buffer> {
  const h = hash();
  await db.query(
    `INSERT INTO setup_tokens (token_hash, purpose, human_id, created_at, expires_at, used_at)
     VALUES ($1, 'invite', $2, now() - interval '60 days', now() + $3::interval, now() + $4::interval)`,
    [h, humanId, a.expiresAt, a.usedAt],
  );
  return h;
}

/** A `switchboard login --web` code expiring (or expired) at `expiresAt` from now, spent at `usedAt` if given. */
export async function cliLoginCode(
  db: Pool,
  humanId: string,
  a: { usedAt: string | null; expiresAt: string },
): Promise<Buffer> {
  const h = hash();
  await db.query(
    `INSERT INTO cli_login_codes (hash, human_id, redirect_uri, code_challenge, token_name, created_at, expires_at, used_at)
     VALUES ($1, $2, 'http://127.0.0.1:5000/callback', $3, 'switchboard CLI', now() + $4::interval - interval '60 seconds',
             now() + $4::interval, now() + $5::interval)`,
    [h, humanId, 'C'.repeat(43), a.expiresAt, a.usedAt],
  );
  return h;
}

export async function apiToken(
  db: Pool,
  humanId: string,
  a: { revokedAt: string | null; expiresAt: string | null },
): Promise<string> {
  const id = `tk-${tag()}`;
  await db.query(
    `INSERT INTO api_tokens (id, human_id, kind, name, token_hash, created_at, expires_at, revoked_at)
     VALUES ($1, $2, 'human', 'cli', $3, now() - interval '400 days', now() + $4::interval, now() + $5::interval)`,
    [id, humanId, hash(), a.expiresAt, a.revokedAt],
  );
  return id;
}

export async function webhook(db: Pool, endpointId: string): Promise<string> {
  const id = `wh-${tag()}`;
  await db.query(`INSERT INTO webhooks (endpoint_id, id, name, queue, token_hash) VALUES ($1, $2, 'ci', 'inbox', $3)`, [
    endpointId,
    id,
    hash(),
  ]);
  return id;
}

/** A delivery id seen on the webhook; returns the id. */
export async function delivery(db: Pool, endpointId: string, webhookId: string, receivedAt: string): Promise<string> {
  const id = `msg_${tag()}`;
  await db.query(
    `INSERT INTO webhook_deliveries (endpoint_id, webhook_id, delivery_id, todo_id, received_at)
     VALUES ($1, $2, $3, 'td-gone', now() + $4::interval)`,
    [endpointId, webhookId, id, receivedAt],
  );
  return id;
}

export async function event(db: Pool, endpointId: string, webhookId: string, receivedAt: string): Promise<string> {
  const id = `ev_${tag()}`;
  await db.query(
    `INSERT INTO webhook_events (endpoint_id, id, webhook_id, provider, queue, verified, received_at)
     VALUES ($1, $2, $3, 'github', 'inbox', true, now() + $4::interval)`,
    [endpointId, id, webhookId, receivedAt],
  );
  return id;
}

export async function auditEntry(db: Pool, endpointId: string, humanId: string, at: string): Promise<number> {
  const res = await db.query<{ id: number }>(
    `INSERT INTO admission_policy_audit (policy_id, endpoint_id, queue, actor_human_id, action, after, at)
     VALUES (gen_random_uuid(), $1, 'inbox', $2, 'create', '{}'::jsonb, now() + $3::interval) RETURNING id`,
    [endpointId, humanId, at],
  );
  return res.rows[0]?.id ?? NaN;
}

export type RingState = 'open' | 'acked' | 'unheard';

export async function ring(db: Pool, endpointId: string, sentAt: string, state: RingState): Promise<string> {
  const id = `rg-${tag()}`;
  await db.query(
    `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at, acked_at, ack_via,
                                 unheard_at)
     VALUES ($1, $2, 's-any', 'td-any', 'todo', 'inbox', now() + $3::interval,
             CASE WHEN $4 = 'acked' THEN now() + $3::interval END, CASE WHEN $4 = 'acked' THEN 'claim' END,
             CASE WHEN $4 = 'unheard' THEN now() + $3::interval + interval '15 minutes' END)`,
    [endpointId, id, sentAt, state],
  );
  return id;
}

/** A self-test started at `startedAt`: finished (report frozen) or still outstanding. */
export async function selfTest(db: Pool, endpointId: string, startedAt: string, reported: boolean): Promise<string> {
  const id = `dt-${tag()}`;
  await db.query(
    `INSERT INTO doorbell_tests (endpoint_id, id, todo_id, wait_seconds, started_at, expires_at, report, started_via)
     VALUES ($1, $2, 'td-any', 60, now() + $3::interval, now() + $3::interval + interval '62 seconds',
             CASE WHEN $4 THEN '{"verdict": "pass"}'::jsonb END, 'api')`,
    [endpointId, id, startedAt, reported],
  );
  return id;
}

/** A registered OAuth client named after `owner` (the test's endpoint id), registered `registeredAt` ago. */
export async function oauthClient(db: Pool, owner: string, registeredAt = '-30 days'): Promise<string> {
  const id = `oc-${tag()}`;
  await db.query(
    `INSERT INTO oauth_clients (id, client_name, redirect_uris, metadata, created_at)
     VALUES ($1, $2, ARRAY['http://127.0.0.1/cb'], '{}', now() + $3::interval)`,
    [id, owner, registeredAt],
  );
  return id;
}

/** A grant of `clientId` acting as the endpoint: `lastUsedAt` its last token pair (null: never exchanged). */
export async function oauthGrant(
  db: Pool,
  ep: { id: string; human_id: string },
  a: { clientId?: string; createdAt?: string; lastUsedAt?: string | null; revokedAt?: string | null },
): Promise<string> {
  const id = `og-${tag()}`;
  const clientId = a.clientId ?? (await oauthClient(db, ep.id));
  await db.query(
    `INSERT INTO oauth_grants (id, client_id, endpoint_id, human_id, resource, created_at, issued_at, last_used_at, revoked_at)
     VALUES ($1, $2, $3, $4, 'http://127.0.0.1/mcp', now() + $5::interval,
             now() + $6::interval, now() + $6::interval, now() + $7::interval)`,
    [id, clientId, ep.id, ep.human_id, a.createdAt ?? '-60 days', a.lastUsedAt ?? null, a.revokedAt ?? null],
  );
  return id;
}

export async function oauthCode(db: Pool, grantId: string, expiresAt: string): Promise<void> {
  await db.query(
    `INSERT INTO oauth_codes (hash, grant_id, redirect_uri, code_challenge, expires_at)
     VALUES ($1, $2, 'http://127.0.0.1/cb', 'x', now() + $3::interval)`,
    [hash(), grantId, expiresAt],
  );
}

export async function oauthToken(
  db: Pool,
  grantId: string,
  kind: 'access' | 'refresh',
  expiresAt: string,
): Promise<void> {
  await db.query(
    `INSERT INTO oauth_tokens (hash, grant_id, kind, expires_at) VALUES ($1, $2, $3, now() + $4::interval)`,
    [hash(), grantId, kind, expiresAt],
  );
}
