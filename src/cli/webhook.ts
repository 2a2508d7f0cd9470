// `switchboard webhook create|list|rotate|set-secret|delete`: ingest URLs that turn a
// provider's delivery (GitHub, GitLab, Gitea/Forgejo, Stripe, Slack, Standard Webhooks,
// or a plain token POST) into a todo on one queue of an endpoint. The URL is a
// credential, and a signed provider's generated secret too: each is printed once (at
// create, rotate, set-secret) and never listed. Delivery is the server's.
// `webhook rules|test-rules|trust` (webhook-rules.ts) manage its routing rules and trust gate.

import type { Command } from 'commander';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import type { Webhook, WebhookCreated as CreateAnswer } from '../client/index.js';
import { CliError, EXIT } from './exit.js';
import { apiCommand, oneLineErrors, oneOf, queueName, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues, section, table } from './output.js';
import { registerRoutingCommands } from './webhook-rules.js';

interface CreateOptions extends CommonOptions {
  queue: string;
  name?: string;
  provider?: string;
}

interface SecretOptions extends CommonOptions {
  secretStdin?: boolean;
}

/** The providers the server knows (docs/design/intake.md); `token` is the default. */
export const PROVIDERS = ['token', 'github', 'gitlab', 'gitea', 'stripe', 'slack', 'standard'] as const;

const webhookPath = (id: string) => `/api/v1/webhooks/${encodeURIComponent(id)}`;

export function registerWebhook(program: Command): void {
  const group = oneLineErrors(
    program.command('webhook').description("URLs that turn a provider's delivery into a todo"),
  );
  apiCommand(group, 'create', 'create a webhook URL for one queue (the URL is shown once)')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .requiredOption('--queue <Q>', 'the queue its todos go to')
    .option('--name <N>', 'a label, e.g. github')
    .option('--provider <P>', `who sends and signs the deliveries: ${PROVIDERS.join(', ')} (default token)`)
    .action(run(create));
  apiCommand(group, 'list', "list an endpoint's webhooks (without their URLs)")
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .action(run(list));
  apiCommand(group, 'rotate', 'replace a webhook’s URL; the old one stops working at once')
    .argument('<ID>', 'webhook id')
    .action(run(rotate));
  apiCommand(group, 'set-secret', 'set the provider-issued signing secret, or generate a new one (shown once)')
    .argument('<ID>', 'webhook id')
    .option('--secret-stdin', 'read the provider’s secret from stdin (Stripe’s whsec_…, Slack’s signing secret)')
    .action(run(setSecret));
  apiCommand(group, 'delete', 'delete a webhook').argument('<ID>', 'webhook id').action(run(remove));
  registerRoutingCommands(group);
}

/** Checks the flags and builds the POST body; throws a usage error naming the bad flag. */
export function createBody(opts: CreateOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { queue: queueName('--queue', opts.queue) };
  if (opts.name !== undefined) body.name = textFlag('--name', opts.name, 100);
  if (opts.provider !== undefined) body.provider = oneOf('--provider', opts.provider, PROVIDERS);
  return body;
}

async function create(endpoint: string, opts: CreateOptions): Promise<void> {
  const body = createBody(opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<CreateAnswer>('POST', `${endpointPath(endpoint)}/webhooks`, body);
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
        { header: 'PROVIDER', value: (w) => w.provider },
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

async function secretFromStdin(): Promise<string> {
  let data = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) data += chunk as string;
  const secret = data.trim();
  if (secret === '') throw new CliError('--secret-stdin: stdin was empty', EXIT.usage);
  return secret;
}

async function setSecret(id: string, opts: SecretOptions): Promise<void> {
  // From stdin, never a flag: a flag's value shows in the process list and shell history.
  const body = opts.secretStdin ? { secret: await secretFromStdin() } : {};
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ webhook: Webhook; secret?: string; previous_valid_until: string | null }>(
    'POST',
    `${webhookPath(id)}/secret`,
    body,
  );
  emit(opts.json, answer, (a) => {
    const grace = a.previous_valid_until
      ? `the previous secret keeps verifying until ${a.previous_valid_until}\n`
      : 'the previous secret stopped verifying\n';
    const shown = a.secret
      ? section('Signing secret (shown once; give it to the sender now):', `  ${a.secret}\n`)
      : 'the secret you gave is set\n';
    return shown + grace;
  });
}

async function remove(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ deleted: boolean }>('DELETE', webhookPath(id));
  emit(opts.json, answer, () => `deleted webhook ${id}`);
}

function showOnce(a: CreateAnswer): string {
  const signed = a.webhook.provider !== undefined && a.webhook.provider !== 'token';
  return (
    keyValues([
      ['id', a.webhook.id],
      ['name', a.webhook.name],
      ['provider', a.webhook.provider],
      ['queue', a.webhook.queue],
    ]) +
    section('URL (shown once: it is the credential and cannot be shown again; copy it now):', `  ${a.url}\n`) +
    (a.secret
      ? section(
          'Signing secret (shown once; paste it into the provider’s webhook settings, or set the provider’s own with `webhook set-secret`):',
          `  ${a.secret}\n`,
        )
      : '') +
    (signed
      ? ''
      : section('Try it:', `  curl -X POST -H 'content-type: application/json' -d '{"title":"hello"}' '${a.url}'\n`))
  );
}
