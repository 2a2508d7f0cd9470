// `switchboard hook create|list|rotate|delete`: an endpoint's notify hooks, outbound
// HTTPS URLs POSTed a signed notification when its work becomes ready (for consumers
// with no live session: cron jobs, `claude -p`). The signing secret is printed once.

import type { Command } from 'commander';
import type { Hook } from '../client/index.js';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { apiCommand, collect, oneLineErrors, queueName, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues, section, table } from './output.js';

export interface HookCreateOptions extends CommonOptions {
  queue?: string[];
  ignorePresence?: boolean;
}

const hooksPath = (endpoint: string) => `${endpointPath(endpoint)}/notify-hooks`;

export function registerHook(program: Command): void {
  const group = oneLineErrors(
    program.command('hook').description('notify hooks: HTTPS URLs told (signed) when work is ready'),
  );
  apiCommand(group, 'create', 'add a notify hook URL (the signing secret is shown once)')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('<URL>', 'an https:// URL on a public address')
    .option('--queue <Q>', 'only this queue (repeatable; default: all)', collect)
    .option('--ignore-presence', 'also notify while the endpoint is clocked out')
    .action(run(create));
  apiCommand(group, 'list', "list an endpoint's notify hooks with their health")
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .action(run(list));
  apiCommand(group, 'rotate', 'new signing secret (the old one signs too for 24 h); re-enables the hook')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('<ID>', 'hook id (nh_…)')
    .option('--immediate', 'the old secret stops signing at once (a leaked secret), not after 24 h')
    .action(run(rotate));
  apiCommand(group, 'delete', 'delete a notify hook')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('<ID>', 'hook id (nh_…)')
    .action(run(remove));
}

/** Checks the flags and builds the POST body; throws a usage error naming the bad flag. */
export function hookBody(url: string, opts: HookCreateOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { url: textFlag('URL', url, 2048) };
  if (opts.queue) body.queues = opts.queue.map((q) => queueName('--queue', q));
  if (opts.ignorePresence) body.ignore_presence = true;
  return body;
}

async function create(endpoint: string, url: string, opts: HookCreateOptions): Promise<void> {
  const body = hookBody(url, opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<Hook & { signing_secret: string }>('POST', hooksPath(endpoint), body);
  emit(
    opts.json,
    answer,
    (a) =>
      keyValues([
        ['id', a.hook_id],
        ['url', a.url],
        ['queues', a.queues.length > 0 ? a.queues.join(', ') : 'all'],
        ['ignore presence', a.ignore_presence ? 'yes' : 'no'],
      ]) + section('Signing secret (shown once; verify webhook-signature with it):', `  ${a.signing_secret}\n`),
  );
}

async function list(endpoint: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ hooks: Hook[]; max: number; used: number }>('GET', hooksPath(endpoint));
  emit(
    opts.json,
    answer,
    (a) =>
      table(
        a.hooks,
        [
          { header: 'ID', value: (h) => h.hook_id },
          { header: 'URL', value: (h) => h.url.split('?')[0], max: 50 },
          { header: 'QUEUES', value: (h) => (h.queues.length > 0 ? h.queues.join(',') : 'all') },
          { header: 'ENABLED', value: (h) => (h.enabled ? 'yes' : `no (${h.disabled_reason ?? 'disabled'})`) },
          { header: 'FAILURES', value: (h) => h.health.consecutive_failures },
          { header: 'LAST STATUS', value: (h) => h.health.last_status },
          { header: 'LAST ERROR', value: (h) => h.health.last_error, max: 40 },
        ],
        'no notify hooks',
      ) + `${a.used} of ${a.max} used\n`,
  );
}

async function rotate(endpoint: string, id: string, opts: CommonOptions & { immediate?: boolean }): Promise<void> {
  const client = await signedInClient(opts.url);
  const path = `${hooksPath(endpoint)}/${encodeURIComponent(id)}/rotate`;
  const body = opts.immediate ? { immediate: true } : undefined;
  const answer = await client.request<Hook & { signing_secret: string }>('POST', path, body);
  const old = opts.immediate ? 'the old one no longer signs' : 'the old one also signs for 24 h';
  emit(opts.json, answer, (a) => section(`New signing secret (shown once; ${old}):`, `  ${a.signing_secret}\n`));
}

async function remove(endpoint: string, id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ deleted: boolean }>(
    'DELETE',
    `${hooksPath(endpoint)}/${encodeURIComponent(id)}`,
  );
  emit(opts.json, answer, () => `deleted notify hook ${id}`);
}
