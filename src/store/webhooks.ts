// Webhooks: an unguessable URL that turns a POST into a todo on one queue of one
// endpoint, for a provider (`token`: the URL alone; a signed provider: its signature too,
// docs/design/intake.md). Managed by the endpoint's owner; the ingest lookup is by token
// hash. The signing secrets are read only by the ingest lookup, never listed.

import type { Queryable } from '../db/pool.js';
import type { Rule, RuleDefault } from '../domain/routing.js';

export interface Webhook {
  id: string;
  endpoint_id: string;
  name: string;
  queue: string;
  provider: string;
  created_at: Date;
  rotated_at: Date | null;
  last_delivery_at: Date | null;
}

/** A webhook's routing (docs/design/routing.md): its rules, default action and trust gate, as stored. */
export interface WebhookRouting {
  rules: Rule[];
  rules_default: RuleDefault;
  /** Null: no trust gate. */
  trusted_actors: string[] | null;
  trust_when: string | null;
}

/** A webhook as the ingest reads it: with the secrets that verify a delivery now, its routing and its owner. */
export interface IngestWebhook extends Webhook, WebhookRouting {
  /** The current secret, and the previous one while its rotation grace lasts; empty for `token`. */
  secrets: string[];
  human_id: string;
}

const ROUTING = 'w.rules, w.rules_default, w.trusted_actors, w.trust_when';

/**
 * Whose webhook a statement may touch: a human's (any of their endpoints', through the
 * API) or one endpoint's (an agent's own, over MCP). Bound as $1; another's answers as
 * absent, never as forbidden.
 */
export type WebhookOwner = { humanId: string } | { endpointId: string };

/** The owner predicate on `e` (the endpoint joined to the webhook) and its $1. */
export function ownerOf(owner: WebhookOwner): { where: string; param: string } {
  return 'humanId' in owner
    ? { where: 'e.human_id = $1', param: owner.humanId }
    : { where: 'e.id = $1', param: owner.endpointId };
}

const COLUMNS = 'w.id, w.endpoint_id, w.name, w.queue, w.provider, w.created_at, w.rotated_at, w.last_delivery_at';

export async function insertWebhook(
  db: Queryable,
  a: {
    id: string;
    endpointId: string;
    name: string;
    queue: string;
    tokenHash: Buffer;
    provider: string;
    secret: string | null;
  },
): Promise<Webhook> {
  const res = await db.query<Webhook>(
    `INSERT INTO webhooks AS w (endpoint_id, id, name, queue, token_hash, provider, secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING ${COLUMNS}`,
    [a.endpointId, a.id, a.name, a.queue, a.tokenHash, a.provider, a.secret],
  );
  return res.rows[0] as Webhook;
}

/**
 * Replaces the signing secret of one of this human's signed webhooks; the one it replaces
 * keeps verifying for `graceSeconds` (0: not at all). A `token` webhook has none to set.
 */
export async function setWebhookSecret(
  db: Queryable,
  owner: WebhookOwner,
  a: { id: string; secret: string; graceSeconds: number },
): Promise<(Webhook & { previous_valid_until: Date | null }) | null> {
  const o = ownerOf(owner);
  const res = await db.query<Webhook & { previous_valid_until: Date | null }>(
    `UPDATE webhooks w SET prev_secret = w.secret, secret = $3,
            prev_secret_expires_at = now() + make_interval(secs => $4)
       FROM endpoints e WHERE e.id = w.endpoint_id AND ${o.where} AND w.id = $2 AND w.provider <> 'token'
     RETURNING ${COLUMNS}, CASE WHEN $4 > 0 THEN w.prev_secret_expires_at END AS previous_valid_until`,
    [o.param, a.id, a.secret, a.graceSeconds],
  );
  return res.rows[0] ?? null;
}

/** One of this owner's webhooks by id (webhooks_id_idx), or null. */
export async function webhookOf(db: Queryable, owner: WebhookOwner, id: string): Promise<Webhook | null> {
  const o = ownerOf(owner);
  const res = await db.query<Webhook>(
    `SELECT ${COLUMNS} FROM webhooks w JOIN endpoints e ON e.id = w.endpoint_id WHERE w.id = $2 AND ${o.where}`,
    [o.param, id],
  );
  return res.rows[0] ?? null;
}

export async function listWebhooks(db: Queryable, endpointId: string): Promise<Webhook[]> {
  const res = await db.query<Webhook>(
    `SELECT ${COLUMNS} FROM webhooks w WHERE w.endpoint_id = $1 ORDER BY w.created_at, w.id`,
    [endpointId],
  );
  return res.rows;
}

/** Swaps the token of one of this owner's webhooks: the old URL stops at once. */
export async function rotateWebhook(
  db: Queryable,
  owner: WebhookOwner,
  id: string,
  tokenHash: Buffer,
): Promise<Webhook | null> {
  const o = ownerOf(owner);
  const res = await db.query<Webhook>(
    `UPDATE webhooks w SET token_hash = $3, rotated_at = now()
       FROM endpoints e WHERE e.id = w.endpoint_id AND ${o.where} AND w.id = $2
     RETURNING ${COLUMNS}`,
    [o.param, id, tokenHash],
  );
  return res.rows[0] ?? null;
}

export async function deleteWebhook(db: Queryable, owner: WebhookOwner, id: string): Promise<boolean> {
  const o = ownerOf(owner);
  const res = await db.query(
    `DELETE FROM webhooks w USING endpoints e WHERE e.id = w.endpoint_id AND ${o.where} AND w.id = $2`,
    [o.param, id],
  );
  return res.rowCount === 1;
}

/** The webhook for an ingest token, with its live secrets, only while its endpoint is live. */
export async function webhookForToken(db: Queryable, tokenHash: Buffer): Promise<IngestWebhook | null> {
  const res = await db.query<IngestWebhook>(
    `SELECT ${COLUMNS}, ${ROUTING}, e.human_id,
            array_remove(ARRAY[w.secret,
              CASE WHEN w.prev_secret_expires_at > now() THEN w.prev_secret END], NULL) AS secrets
       FROM webhooks w JOIN endpoints e ON e.id = w.endpoint_id
      WHERE w.token_hash = $1 AND e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > now())`,
    [tokenHash],
  );
  return res.rows[0] ?? null;
}

/**
 * Records a delivery id; returns the todo id of an earlier delivery with the same id, or
 * null when this one is new (the caller then creates the todo in the same transaction).
 * Two statements on purpose: when a concurrent delivery of the same id commits first, the
 * insert waits for it and does nothing, and only a fresh statement can see its row.
 */
export async function claimDelivery(
  db: Queryable,
  a: { endpointId: string; webhookId: string; deliveryId: string; todoId: string | null; eventId?: string },
): Promise<{ todo_id: string | null; event_id: string | null } | null> {
  const key = [a.endpointId, a.webhookId, a.deliveryId];
  const inserted = await db.query(
    `INSERT INTO webhook_deliveries (endpoint_id, webhook_id, delivery_id, todo_id, event_id) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING`,
    [...key, a.todoId, a.eventId ?? null],
  );
  if (inserted.rowCount === 1) return null;
  const earlier = await db.query<{ todo_id: string | null; event_id: string | null }>(
    'SELECT todo_id, event_id FROM webhook_deliveries WHERE endpoint_id = $1 AND webhook_id = $2 AND delivery_id = $3',
    key,
  );
  return earlier.rows[0] ?? null;
}

export async function touchWebhook(db: Queryable, endpointId: string, id: string): Promise<void> {
  await db.query('UPDATE webhooks SET last_delivery_at = now() WHERE endpoint_id = $1 AND id = $2', [endpointId, id]);
}

/** One of this owner's webhooks with its routing, or null. */
export async function webhookRoutingOf(
  db: Queryable,
  owner: WebhookOwner,
  id: string,
): Promise<(Webhook & WebhookRouting & { human_id: string; endpoint_queues: string[] }) | null> {
  const o = ownerOf(owner);
  const res = await db.query<Webhook & WebhookRouting & { human_id: string; endpoint_queues: string[] }>(
    `SELECT ${COLUMNS}, ${ROUTING}, e.human_id, e.queues AS endpoint_queues FROM webhooks w JOIN endpoints e ON e.id = w.endpoint_id
      WHERE w.id = $2 AND ${o.where}`,
    [o.param, id],
  );
  return res.rows[0] ?? null;
}

/** Saves a webhook's rules and default whole (compiled by the caller first). */
export async function setWebhookRules(
  db: Queryable,
  owner: WebhookOwner,
  a: { id: string; rules: Rule[]; default: RuleDefault },
): Promise<boolean> {
  const o = ownerOf(owner);
  const res = await db.query(
    `UPDATE webhooks w SET rules = $3::jsonb, rules_default = $4
       FROM endpoints e WHERE e.id = w.endpoint_id AND ${o.where} AND w.id = $2`,
    [o.param, a.id, JSON.stringify(a.rules), a.default],
  );
  return res.rowCount === 1;
}

/** Sets a webhook's trust gate: the trusted actors (null: no gate) and the trusting expression. */
export async function setWebhookTrust(
  db: Queryable,
  owner: WebhookOwner,
  a: { id: string; actors: string[] | null; when: string | null },
): Promise<boolean> {
  const o = ownerOf(owner);
  const res = await db.query(
    `UPDATE webhooks w SET trusted_actors = $3::text[], trust_when = $4
       FROM endpoints e WHERE e.id = w.endpoint_id AND ${o.where} AND w.id = $2`,
    [o.param, a.id, a.actors, a.when],
  );
  return res.rowCount === 1;
}

/** A human's live endpoints by slug: the targets a route may name (docs/design/routing.md, "Fan-out"). */
export async function routeTargets(
  db: Queryable,
  humanId: string,
  slugs: string[],
): Promise<{ id: string; slug: string; queues: string[] }[]> {
  const res = await db.query<{ id: string; slug: string; queues: string[] }>(
    `SELECT id, slug, queues FROM endpoints
      WHERE human_id = $1 AND slug = ANY($2::text[]) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    [humanId, slugs],
  );
  return res.rows;
}
