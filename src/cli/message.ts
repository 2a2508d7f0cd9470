// `switchboard message send|list|remove|clear`: a session's message queue over the REST
// API, as its owner (queued_by user; with a workflow token in SWITCHBOARD_TOKEN, `send`
// queues as workflow). What is in flight to the agent is not listed and cannot be removed.

import type { Command } from 'commander';
import type { MessageQueue as Status, QueuedMessage as Entry } from '../client/index.js';
import { signedInClient } from './client.js';
import { apiCommand, oneLineErrors, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues, table } from './output.js';

/** 16 KiB of text: the server refuses more, this only saves the round trip. */
const CONTENT_CHARS = 16 * 1024;

export const queuePath = (session: string) => `/api/v1/sessions/${encodeURIComponent(session)}/queue`;

export function registerMessage(program: Command): void {
  const group = oneLineErrors(program.command('message').description("a live MCP session's message queue"));
  apiCommand(group, 'send', 'queue a message into a session; the agent gets it in order, one at a time')
    .argument('<SESSION>', 'the MCP session id, ms_… (see `switchboard endpoint show`)')
    .argument('<CONTENT>', 'the message text')
    .action(run(send));
  apiCommand(group, 'list', "list a session's pending messages (not the one in flight)")
    .argument('<SESSION>', 'the MCP session id')
    .action(run(list));
  apiCommand(group, 'remove', 'remove one pending message, whoever queued it')
    .argument('<SESSION>', 'the MCP session id')
    .argument('<ENTRY>', 'the message id')
    .action(run(remove));
  apiCommand(group, 'clear', 'remove every pending message of a session (Clear all)')
    .argument('<SESSION>', 'the MCP session id')
    .action(run(clear));
}

async function send(session: string, content: string, opts: CommonOptions): Promise<void> {
  const body = { content: textFlag('CONTENT', content, CONTENT_CHARS) };
  const client = await signedInClient(opts.url);
  const answer = await client.request<Entry>('POST', queuePath(session), body);
  emit(opts.json, answer, (a) =>
    keyValues([
      ['queued', a.id],
      ['position', a.position],
      ['queued by', a.queued_by],
    ]),
  );
}

async function list(session: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<Status>('GET', queuePath(session));
  emit(
    opts.json,
    answer,
    (a) =>
      table(
        a.entries,
        [
          { header: '#', value: (e) => e.position },
          { header: 'ID', value: (e) => e.id },
          { header: 'QUEUED BY', value: (e) => e.queued_by },
          { header: 'QUEUED', value: (e) => e.queued_at },
          { header: 'CONTENT', value: (e) => e.content, max: 60 },
        ],
        'no pending messages',
      ) + `${a.count} pending, capacity ${a.max === 0 ? 'unlimited' : a.max}\n`,
  );
}

async function remove(session: string, entry: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ entry_id: string }>(
    'DELETE',
    `${queuePath(session)}/${encodeURIComponent(entry)}`,
  );
  emit(opts.json, answer, (a) => `removed message ${a.entry_id}`);
}

async function clear(session: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ removed: number }>('DELETE', queuePath(session));
  emit(opts.json, answer, (a) => `removed ${a.removed} pending message(s)`);
}
