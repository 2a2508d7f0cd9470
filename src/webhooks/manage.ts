// Webhooks as an endpoint's owner manages them: create (URL, and a signed provider's
// generated secret, shown once), list, rotate the URL (the old one stops at once), set or
// regenerate the signing secret (the previous one verifies through the rotation grace),
// delete (docs/design/intake.md, "Webhooks with a provider").

import { z } from 'zod';
import { invalidArgument, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { parseInput, QUEUE_NAME } from '../domain/todo.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import { newHookSecret } from '../hooks/sign.js';
import { newSecret } from '../identity/secrets.js';
import { NO_KEYRING, seal, type Keyring } from '../secrets/keyring.js';
import { withQuota } from '../quotas/check.js';
import {
  deleteWebhook as deleteRow,
  insertWebhook,
  listWebhooks as listRows,
  rotateWebhook as rotateRow,
  setWebhookSecret as setSecretRow,
  webhookOf,
  type Webhook,
  type WebhookOwner,
} from '../store/webhooks.js';
import { isSigned, PROVIDERS } from './verify.js';

/**
 * A signing secret as a provider issues it (Stripe's `whsec_…`, Slack's hex signing
 * secret, a GitLab token): printable, no spaces, long enough not to be guessed, short
 * enough for any header.
 */
const providerSecret = z
  .string()
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
  .min(16, 'must be at least 16 characters')
  .check(maxLength(256));

export const createWebhookInput = z.strictObject({
  queue: z
    .string()
    .regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}')
    .describe("The queue its deliveries' todos go to: one of the endpoint's queues."),
  name: z.string().trim().min(1).check(maxLength(100)).optional().describe('A label; default: the queue.'),
  provider: z
    .enum(PROVIDERS)
    .optional()
    .describe('Who sends and signs the deliveries; default token (the URL alone is the credential).'),
  secret: providerSecret
    .optional()
    .describe('The signing secret the provider issued; absent: one is generated and answered once.'),
});

export const webhookSecretInput = z.strictObject({
  secret: providerSecret
    .optional()
    .describe('The signing secret the provider issued; absent: a new one is generated and answered once.'),
});

export interface WebhookDeps extends EndpointDeps {
  /** Seals signing secrets at rest (docs/design/intake.md, "Secrets at rest"); absent: stored as issued. */
  keyring?: Keyring;
  /** SWITCHBOARD_WEBHOOK_SECRET_GRACE in seconds: how long a replaced secret still verifies. */
  secretGraceSeconds?: number;
}

/** A day: long enough to update the sender's secret after rotating it here, short enough to retire a leaked one. */
export const DEFAULT_SECRET_GRACE_SECONDS = 86_400;

const urlFor = (deps: EndpointDeps, secret: string) => `${deps.publicUrl}/webhooks/${secret}`;

export type CreatedWebhook = { webhook: Webhook; url: string; secret?: string };

/** POST /api/v1/endpoints/{ref}/webhooks: a webhook on one of this human's endpoints. */
export async function createWebhook(
  deps: WebhookDeps,
  humanId: string,
  ref: string,
  input: unknown,
): Promise<CreatedWebhook> {
  const data = parseInput(createWebhookInput, input);
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  return createWebhookOn(deps, endpoint, data);
}

/** A webhook on this endpoint, for one of its queues (its granted ones, for an agent's own). */
export async function createWebhookOn(
  deps: WebhookDeps,
  endpoint: { id: string; slug: string; queues: string[] },
  data: z.infer<typeof createWebhookInput>,
): Promise<CreatedWebhook> {
  const provider = data.provider ?? 'token';
  if (!isSigned(provider) && data.secret !== undefined) {
    throw invalidArgument('secret', 'a token webhook has no signing secret (its URL is the credential)');
  }
  // Generated unless the provider issued one: shown once, in this answer.
  const generated = isSigned(provider) && data.secret === undefined ? newHookSecret() : undefined;
  const signingSecret = isSigned(provider) ? (data.secret ?? generated ?? null) : null;
  if (!endpoint.queues.includes(data.queue)) {
    throw invalidArgument(
      'queue',
      `"${data.queue}" is not one of ${endpoint.slug}'s queues (${endpoint.queues.join(', ')})`,
    );
  }
  const { secret, hash } = newSecret('sbw');
  const webhook = await withQuota(deps.db, deps, 'webhooks', { endpointId: endpoint.id }, (tx) =>
    insertWebhook(tx, {
      id: newId('wh'),
      endpointId: endpoint.id,
      name: data.name ?? data.queue,
      queue: data.queue,
      tokenHash: hash,
      provider,
      secret: signingSecret === null ? null : seal(deps.keyring ?? NO_KEYRING, signingSecret),
    }),
  );
  return { webhook, url: urlFor(deps, secret), ...(generated ? { secret: generated } : {}) };
}

/**
 * POST /api/v1/webhooks/{id}/secret: `{secret}` sets a provider-issued secret; `{}`
 * generates one (shown once). The replaced secret keeps verifying for the grace.
 */
export async function setWebhookSecret(
  deps: WebhookDeps,
  owner: WebhookOwner,
  id: string,
  input: unknown,
): Promise<{ webhook: Webhook; secret?: string; previous_valid_until: Date | null }> {
  const data = parseInput(webhookSecretInput, input ?? {});
  const generated = data.secret === undefined ? newHookSecret() : undefined;
  const graceSeconds = deps.secretGraceSeconds ?? DEFAULT_SECRET_GRACE_SECONDS;
  const row = await setSecretRow(deps.db, owner, {
    id,
    secret: seal(deps.keyring ?? NO_KEYRING, data.secret ?? (generated as string)),
    graceSeconds,
  });
  if (!row) {
    const found = await webhookOf(deps.db, owner, id);
    if (!found) throw notFound('webhook', id);
    throw invalidArgument('secret', 'a token webhook has no signing secret (its URL is the credential)');
  }
  const { previous_valid_until: until, ...webhook } = row;
  return { webhook, ...(generated ? { secret: generated } : {}), previous_valid_until: until };
}

export async function listWebhooks(deps: EndpointDeps, humanId: string, ref: string): Promise<Webhook[]> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  return listRows(deps.db, endpoint.id);
}

/** An endpoint's webhooks (its own, for an agent). */
export function listWebhooksOf(deps: { db: EndpointDeps['db'] }, endpointId: string): Promise<Webhook[]> {
  return listRows(deps.db, endpointId);
}

export async function rotateWebhook(
  deps: EndpointDeps,
  owner: WebhookOwner,
  id: string,
): Promise<{ webhook: Webhook; url: string }> {
  const { secret, hash } = newSecret('sbw');
  const webhook = await rotateRow(deps.db, owner, id, hash);
  if (!webhook) throw notFound('webhook', id);
  return { webhook, url: urlFor(deps, secret) };
}

export async function deleteWebhook(deps: EndpointDeps, owner: WebhookOwner, id: string): Promise<{ deleted: true }> {
  if (!(await deleteRow(deps.db, owner, id))) throw notFound('webhook', id);
  return { deleted: true };
}
