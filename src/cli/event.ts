// `switchboard event list|show|replay`: an endpoint's webhook event history — what
// arrived, from which provider, whether it verified, and the todos it made — and replay,
// which makes a delivery's todo again as a new event linked to the original
// (docs/design/intake.md). Text from the server may come from a sender: output.ts cleans it.

import type { Command } from 'commander';
import { signedInClient } from './client.js';
import type { Event as EventDetail, EventSummary } from '../client/index.js';
import { endpointPath } from './endpoint.js';
import { apiCommand, integer, oneLineErrors, run, type CommonOptions } from './flags.js';
import { emit, keyValues, section, table, text } from './output.js';

interface ListOptions extends CommonOptions {
  limit?: string;
}

const eventPath = (id: string) => `/api/v1/events/${encodeURIComponent(id)}`;

export function registerEvent(program: Command): void {
  const group = oneLineErrors(program.command('event').description('webhook deliveries received, and replay'));
  apiCommand(group, 'list', "an endpoint's latest webhook events, newest first")
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .option('--limit <N>', 'how many (1–200, default 50)')
    .action(run(list));
  apiCommand(group, 'show', 'one event with its headers and payload')
    .argument('<ID>', 'event id (ev_…)')
    .action(run(show));
  apiCommand(group, 'replay', "make an event's todo again, as a new event linked to it")
    .argument('<ID>', 'event id (ev_…)')
    .action(run(replay));
}

/** The list's query string; throws a usage error naming a bad --limit. */
export function listQuery(opts: ListOptions): string {
  return opts.limit === undefined ? '' : `?limit=${integer('--limit', opts.limit, 1, 200)}`;
}

async function list(endpoint: string, opts: ListOptions): Promise<void> {
  const query = listQuery(opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ events: EventSummary[] }>('GET', `${endpointPath(endpoint)}/events${query}`);
  emit(opts.json, answer, (a) =>
    table(
      a.events,
      [
        { header: 'ID', value: (e) => e.id },
        { header: 'RECEIVED', value: (e) => e.received_at },
        { header: 'PROVIDER', value: (e) => e.provider },
        { header: 'TYPE', value: (e) => e.type, max: 40 },
        { header: 'ACTOR', value: (e) => e.actor, max: 24 },
        { header: 'VERIFIED', value: (e) => (e.verified ? 'yes' : 'no') },
        { header: 'DISPOSITION', value: (e) => (e.replay_of ? `${e.disposition} (replay)` : e.disposition) },
        { header: 'TODOS', value: (e) => e.todo_ids.join(' ') },
      ],
      'no events',
    ),
  );
}

function detail(e: EventDetail): string {
  return (
    keyValues([
      ['id', e.id],
      ['received', e.received_at],
      ['provider', e.provider],
      ['type', e.type],
      ['actor', e.actor],
      ['delivery id', e.delivery_id],
      ['verified', e.verified ? 'yes' : 'no'],
      ['disposition', e.disposition],
      ['queue', e.queue],
      ['todos', e.todo_ids.join(' ')],
      ['replay of', e.replay_of],
      ['content type', e.content_type],
    ]) +
    section(
      'Headers:',
      Object.entries(e.headers)
        .map(([k, v]) => `  ${k}: ${text(v)}\n`)
        .join(''),
    ) +
    section('Payload:', `${text(JSON.stringify(e.payload, null, 2), true)}\n`)
  );
}

async function show(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ event: EventDetail }>('GET', eventPath(id));
  emit(opts.json, answer, (a) => detail(a.event));
}

async function replay(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ event: EventDetail; todos: { id: string; queue: string }[] }>(
    'POST',
    `${eventPath(id)}/replay`,
  );
  emit(
    opts.json,
    answer,
    (a) => `replayed ${id} as ${a.event.id}: ${a.todos.map((t) => `todo ${t.id} on ${t.queue}`).join(', ')}\n`,
  );
}
