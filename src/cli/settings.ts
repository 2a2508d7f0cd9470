// `switchboard settings message-queue [show|set N]`: the install-wide message queue
// capacity. Anyone signed in can show it; setting it needs an admin, and is refused
// while the server's environment fixes it.

import type { Command } from 'commander';
import type { MessageCapacity as CapacityView } from '../client/index.js';
import { signedInClient } from './client.js';
import { apiCommand, oneLineErrors, run, wholeNumber, type CommonOptions } from './flags.js';
import { emit, keyValues } from './output.js';

const PATH = '/api/v1/settings/message-queue';
/** Far above any sensible queue; the server accepts any whole number ≥ 0. */
const MAX_CAPACITY = 1_000_000_000;

export function registerSettings(program: Command): void {
  const group = oneLineErrors(program.command('settings').description('install-wide settings'));
  const queue = oneLineErrors(
    group.command('message-queue').description("messages a session's queue may hold (0 = unlimited)"),
  );
  // `switchboard settings message-queue` alone shows it.
  oneLineErrors(
    queue
      .command('show', { isDefault: true })
      .description('show the configured and effective capacity and where it comes from')
      .option('--json', 'print the answer as JSON')
      .option('--url <URL>', 'the server to talk to (default: SWITCHBOARD_URL, else the saved login)'),
  ).action(run(show));
  apiCommand(queue, 'set', 'save a new capacity (admin); it applies at once on every instance')
    .argument('<N>', 'a whole number; 0 means unlimited')
    .action(run(set));
}

function describe(c: CapacityView): string {
  const value = (n: number | null) => (n === null ? null : n === 0 ? '0 (unlimited)' : n);
  return keyValues([
    ['effective', value(c.effective.max_per_session)],
    ['source', c.effective.source],
    ['saved setting', value(c.settings.max_per_session)],
    ['locked', c.effective.locked ? 'yes: the server environment sets it' : 'no'],
  ]);
}

async function show(opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  emit(opts.json, await client.request<CapacityView>('GET', PATH), describe);
}

async function set(n: string, opts: CommonOptions): Promise<void> {
  const body = { max_per_session: wholeNumber('N', n, 0, MAX_CAPACITY) };
  const client = await signedInClient(opts.url);
  emit(opts.json, await client.request<CapacityView>('PATCH', PATH, body), describe);
}
