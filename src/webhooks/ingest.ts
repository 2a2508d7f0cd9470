// POST /webhooks/{token}: a delivery becomes a todo on the webhook's queue and an event in
// the history, in one transaction (docs/design/intake.md). A signed provider's delivery
// is verified on its raw bytes first: a bad or stale signature is refused with nothing
// written but a counter. Then the body is read as the provider sends it (JSON or a form),
// and the provider's reading gives the todo its kind, title and actor and the delivery
// its dedup id. A `token` webhook keeps its first behaviour: the title from the body's
// `title`, else a header, else a fixed default; the rest of the body is the payload.
// A delivery id is recorded in the same transaction as the todo, so a redelivery — even
// after the todo finished, even racing the original — makes no second todo and answers
// duplicate. A priority rides in the Switchboard-Priority header or the `priority` query
// parameter (the body is the sender's payload).

import type { Tracing } from '../tracing/index.js';
import type { Pool } from '../db/pool.js';
import { AppError, invalidArgument } from '../domain/errors.js';
import { z } from 'zod';
import { createTodoInput, parseInput, PRIORITY_BOUNDS } from '../domain/todo.js';
import { decideEvent } from '../routing/route.js';
import type { RoutingLimits } from '../routing/rules.js';
import { UNSTORABLE_MESSAGE, unstorableField } from '../domain/unstorable.js';
import { hashSecret } from '../identity/secrets.js';
import { NO_KEYRING, open, type Keyring } from '../secrets/keyring.js';
import { webhookForToken, type IngestWebhook } from '../store/webhooks.js';
import type { QuotaDeps } from '../quotas/check.js';
import type { Metrics } from '../metrics/index.js';
import { bodyHash, mediaType, parseBody, readDelivery, sanitizedHeaders, slackChallenge } from './providers.js';
import { recordEvent, type Made, type Reading } from './record.js';
import { isSigned, verifyDelivery, type Provider } from './verify.js';

export interface Delivery {
  /** The body's bytes exactly as received (signatures are over them). */
  raw: Buffer;
  contentType: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** The todo's priority as the sender wrote it, and where (the header or the query parameter), to name it in an error. */
  priority?: { text: string; field: string } | undefined;
}

/**
 * Where a `token` sender puts its delivery id, in order of precedence: an explicit
 * Idempotency-Key first (the caller chose it for this purpose), then the Standard
 * Webhooks message id, GitHub's delivery GUID (kept on a redelivery), and the generic
 * X-Delivery-Id. The first one present is the id; the others are ignored. A signed
 * provider's id is the one its provider documents (providers.ts).
 */
export const DELIVERY_ID_HEADERS = ['Idempotency-Key', 'webhook-id', 'X-GitHub-Delivery', 'X-Delivery-Id'] as const;

/** The delivery id and its header, from a header reader taking lower-case names. */
export function deliveryIdOf(header: (name: string) => string | undefined): { id?: string; header?: string } {
  for (const name of DELIVERY_ID_HEADERS) {
    const id = header(name.toLowerCase());
    if (id !== undefined) return { id, header: name };
  }
  return {};
}

export const DEFAULT_TITLE = 'Webhook delivery';

/** A delivery's answer: Slack's handshake, or the todos it made (or had made, when it is a redelivery). */
export type IngestAnswer = { challenge: string } | Made;

const payloadOnly = z.strictObject({ payload: createTodoInput.shape.payload });

/** A token webhook's todo: `title` from the body (else the header, else the default), the rest as payload. */
export function splitBody(body: unknown, titleHeader: string | undefined): { title: string; payload: unknown } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { title: titleHeader ?? DEFAULT_TITLE, payload: body };
  }
  const { title, ...rest } = body as Record<string, unknown>;
  if (title !== undefined && typeof title !== 'string') throw invalidArgument('title', 'must be a string');
  return { title: title ?? titleHeader ?? DEFAULT_TITLE, payload: rest };
}

/** A priority from a header or query parameter: an integer in PRIORITY_BOUNDS, else invalid_argument naming where it came from. */
function parsePriority(given: Delivery['priority']): number | undefined {
  if (given === undefined) return undefined;
  const n = /^[+-]?\d{1,4}$/.test(given.text.trim()) ? Number(given.text.trim()) : NaN;
  if (!Number.isInteger(n) || n < PRIORITY_BOUNDS.min || n > PRIORITY_BOUNDS.max) {
    throw invalidArgument(given.field, `must be an integer from ${PRIORITY_BOUNDS.min} to ${PRIORITY_BOUNDS.max}`);
  }
  return n;
}

export interface IngestDeps extends QuotaDeps {
  pool: Pool;
  defaultLeaseSeconds: number;
  /** SWITCHBOARD_IDEMPOTENCY_WINDOW in seconds; absent: the server default (todos/context.ts). */
  idempotencyWindowSeconds?: number;
  /** Counted after the delivery's transaction commits. */
  metrics?: Metrics;
  /** The todo stores the request's trace context (its `traceparent` header's trace). */
  tracing?: Tracing;
  /** Seconds since the epoch: the clock signature timestamps are checked against. */
  nowSeconds?: () => number;
  /** Opens the signing secrets sealed at rest (docs/design/intake.md, "Secrets at rest"). */
  keyring?: Keyring;
  /**
   * The per-webhook rate limit (SWITCHBOARD_WEBHOOK_RATE): spends one token for this
   * webhook and answers the seconds to wait, 0 when it may go on. Absent: unlimited.
   */
  limit?: (webhookId: string) => number;
  /** The settings that bound rules (docs/design/routing.md, "Limits"); absent: the defaults. */
  routing?: RoutingLimits;
  /** How long a work-order key holds, in seconds (SWITCHBOARD_WORK_ORDER_WINDOW). */
  workOrderSeconds?: number;
}

/** The todo's fields from a delivery (also how a replay reads a stored one, events.ts). */
export function readingOf(
  provider: Provider,
  header: (name: string) => string | undefined,
  body: unknown,
  raw?: Buffer,
): Reading {
  if (provider === 'token') {
    const { title, payload } = splitBody(body, header('x-switchboard-title'));
    return { kind: null, title, actor: null, payload, deliveryId: deliveryIdOf(header).id ?? null };
  }
  const r = readDelivery(provider, header, body);
  return { ...r, payload: body, deliveryId: r.deliveryId ?? (raw ? bodyHash(raw) : null) };
}

function checkDeliveryId(provider: Provider, header: (name: string) => string | undefined, id: string | null): void {
  if (id !== null && (id.length === 0 || id.length > 200)) {
    const named = provider === 'token' ? (deliveryIdOf(header).header ?? 'Idempotency-Key') : 'delivery id';
    throw invalidArgument(named, 'must be 1–200 characters');
  }
}

/** Refuses a signed delivery whose signature does not verify: 401, nothing written, counted. */
function verifyOrRefuse(
  deps: IngestDeps,
  webhook: IngestWebhook,
  delivery: Delivery,
  header: (n: string) => string | undefined,
): void {
  const provider = webhook.provider as Provider;
  if (!isSigned(provider)) return;
  const nowSeconds = deps.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
  const secrets = webhook.secrets.map((s) => open(deps.keyring ?? NO_KEYRING, s));
  const verdict = verifyDelivery(provider, secrets, { header, raw: delivery.raw, nowSeconds });
  if (verdict.ok) return;
  deps.metrics?.webhooks.verifyFailures.inc({ provider, reason: verdict.reason });
  deps.metrics?.webhooks.deliveries.inc({ provider, verdict: 'rejected' });
  throw new AppError('unauthenticated', `signature: ${verdict.reason.replace('_', ' ')} (${provider} webhook)`, {
    reason: verdict.reason,
  });
}

export async function ingestDelivery(deps: IngestDeps, token: string, delivery: Delivery): Promise<IngestAnswer> {
  const webhook = await webhookForToken(deps.pool, hashSecret(token));
  if (!webhook) throw new AppError('not_found', 'no webhook answers at this URL (unknown, rotated or deleted)');
  const provider = webhook.provider as Provider;
  const wait = deps.limit?.(webhook.id) ?? 0;
  if (wait > 0) {
    deps.metrics?.webhooks.deliveries.inc({ provider, verdict: 'rate_limited' });
    throw new AppError(
      'resource_exhausted',
      `rate limited: this webhook takes more than its rate; retry in ${wait} s`,
      {
        retry_after_seconds: wait,
      },
    );
  }
  const header = (name: string) => {
    const value = delivery.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  verifyOrRefuse(deps, webhook, delivery, header);
  const contentType = mediaType(delivery.contentType);
  let reading: Reading;
  let priority: number | undefined;
  let body: unknown;
  try {
    body = parseBody(contentType, delivery.raw);
    const field = unstorableField(body);
    if (field !== null) throw invalidArgument('payload', UNSTORABLE_MESSAGE);
    if (provider === 'slack') {
      const challenge = slackChallenge(body);
      if (challenge !== null) {
        deps.metrics?.webhooks.deliveries.inc({ provider, verdict: 'challenge' });
        return { challenge };
      }
    }
    reading = readingOf(provider, header, body, delivery.raw);
    checkDeliveryId(provider, header, reading.deliveryId);
    priority = parsePriority(delivery.priority);
    // Refused before routing, whatever the rules would do with it: a todo's payload is at most 256 KiB.
    parseInput(payloadOnly, { payload: reading.payload });
  } catch (err) {
    deps.metrics?.webhooks.deliveries.inc({ provider, verdict: 'invalid' });
    throw err;
  }
  const headers = sanitizedHeaders(delivery.headers);
  const decision = decideEvent(
    webhook,
    { provider, queue: webhook.queue, reading, headers, payload: reading.payload, priority },
    deps.routing,
  );
  const made = await recordEvent(
    { ...deps, db: deps.pool },
    {
      webhook,
      reading,
      decision,
      verified: isSigned(provider),
      contentType,
      headers,
      payload: body,
      dedup: true,
      replayOf: null,
    },
  );
  deps.metrics?.webhooks.deliveries.inc({ provider, verdict: made.duplicate ? 'duplicate' : 'accepted' });
  return made;
}
