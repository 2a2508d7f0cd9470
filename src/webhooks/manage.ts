// Token webhooks as an endpoint's owner manages them: create (URL shown once), list,
// rotate (the old URL stops at once), delete.

import { z } from 'zod';
import { invalidArgument, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { maxLength } from '../domain/issues.js';
import { parseInput, QUEUE_NAME } from '../domain/todo.js';
import { resolveEndpoint, type EndpointDeps } from '../endpoints/manage.js';
import { newSecret } from '../identity/secrets.js';
import { withQuota } from '../quotas/check.js';
import {
  deleteWebhook as deleteRow,
  insertWebhook,
  listWebhooks as listRows,
  rotateWebhook as rotateRow,
  type Webhook,
} from '../store/webhooks.js';

const createInput = z.strictObject({
  queue: z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}'),
  name: z.string().trim().min(1).check(maxLength(100)).optional(),
});

const urlFor = (deps: EndpointDeps, secret: string) => `${deps.publicUrl}/webhooks/${secret}`;

export async function createWebhook(
  deps: EndpointDeps,
  humanId: string,
  ref: string,
  input: unknown,
): Promise<{ webhook: Webhook; url: string }> {
  const data = parseInput(createInput, input);
  const endpoint = await resolveEndpoint(deps, humanId, ref);
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
    }),
  );
  return { webhook, url: urlFor(deps, secret) };
}

export async function listWebhooks(deps: EndpointDeps, humanId: string, ref: string): Promise<Webhook[]> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  return listRows(deps.db, endpoint.id);
}

export async function rotateWebhook(
  deps: EndpointDeps,
  humanId: string,
  id: string,
): Promise<{ webhook: Webhook; url: string }> {
  const { secret, hash } = newSecret('sbw');
  const webhook = await rotateRow(deps.db, humanId, id, hash);
  if (!webhook) throw notFound('webhook', id);
  return { webhook, url: urlFor(deps, secret) };
}

export async function deleteWebhook(deps: EndpointDeps, humanId: string, id: string): Promise<{ deleted: true }> {
  if (!(await deleteRow(deps.db, humanId, id))) throw notFound('webhook', id);
  return { deleted: true };
}
