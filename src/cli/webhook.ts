// `switchboard webhook create|list|rotate|delete`: token-ingest URLs that turn a POSTed
// JSON body into a todo on one queue of an endpoint. The URL is the credential, so it
// is printed once (at create and rotate) and never listed. Delivery is the server's.

import type { Command } from 'commander';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { apiCommand, oneLineErrors, queueName, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues, section, table } from './output.js';

interface Webhook {
  id: string;
  name: string | null;
  queue: string;
  created_at: string;
  rotated_at: string | null;
  last_delivery_at: string | null;
}

interface CreateOptions extends CommonOptions {
  queue: string;
  name?: string;
}

const webhookPath = (id: string) => `/api/v1/webhooks/${encodeURIComponent(id)}`;

export function registerWebhook(program: Command): void {
  const group = oneLineErrors(program.command('webhook').description('URLs that turn a POSTed JSON body into a todo'));
  apiCommand(group, 'create', 'create a webhook URL for one queue (the URL is shown once)')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .requiredOption('--queue <Q>', 'the queue its todos go to')
    .option('--name <N>', 'a label, e.g. github')
    .action(run(create));
  apiCommand(group, 'list', "list an endpoint's webhooks (without their URLs)")
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .action(run(list));
  apiCommand(group, 'rotate', 'replace a webhook’s URL; the old one stops working at once')
    .argument('<ID>', 'webhook id')
    .action(run(rotate));
  apiCommand(group, 'delete', 'delete a webhook').argument('<ID>', 'webhook id').action(run(remove));
}

/** Checks the flags and builds the POST body; throws a usage error naming the bad flag. */
export function createBody(opts: CreateOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { queue: queueName('--queue', opts.queue) };
  if (opts.name !== undefined) body.name = textFlag('--name', opts.name, 100);
  return body;
}

async function create(endpoint: string, opts: CreateOptions): Promise<void> {
  const body = createBody(opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ webhook: Webhook; url: string }>(
    'POST',
    `${endpointPath(endpoint)}/webhooks`,
    body,
  );
  emit(opts.json, answer, showOnce);
}

async function list(endpoint: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ webhooks: Webhook[] }>('GET', `${endpointPath(endpoint)}/webhooks`);
  emit(opts.json, answer, (a) =>
    table(
      a.webhooks,
      [
        { header: 'ID', value: (w) => w.id },
        { header: 'NAME', value: (w) => w.name, max: 30 },
        { header: 'QUEUE', value: (w) => w.queue },
        { header: 'CREATED', value: (w) => w.created_at },
        { header: 'ROTATED', value: (w) => w.rotated_at },
        { header: 'LAST DELIVERY', value: (w) => w.last_delivery_at },
      ],
      'no webhooks',
    ),
  );
}

async function rotate(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ webhook: Webhook; url: string }>('POST', `${webhookPath(id)}/rotate`);
  emit(opts.json, answer, showOnce);
}

async function remove(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ deleted: boolean }>('DELETE', webhookPath(id));
  emit(opts.json, answer, () => `deleted webhook ${id}`);
}

function showOnce(a: { webhook: Webhook; url: string }): string {
  return (
    keyValues([
      ['id', a.webhook.id],
      ['name', a.webhook.name],
      ['queue', a.webhook.queue],
    ]) +
    section('URL (shown once: it is the credential and cannot be shown again; copy it now):', `  ${a.url}\n`) +
    section('Try it:', `  curl -X POST -H 'content-type: application/json' -d '{"title":"hello"}' '${a.url}'\n`)
  );
}
