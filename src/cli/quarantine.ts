// `switchboard quarantine list|show|release|discard`: the events a rule would have routed
// from an actor the webhook does not trust, held for review (docs/design/routing.md,
// "Trusted actors and quarantine"). Show prints who sent it, why it is held, what it would
// make and its payload — text from a stranger, cleaned by output.ts and clipped; release
// routes it as if trusted, discard keeps a reason.

import type { QuarantineDiscarded, QuarantineItem, QuarantineReleased } from '../client/index.js';
import type { Command } from 'commander';
import { signedInClient } from './client.js';
import { apiCommand, integer, oneLineErrors, oneOf, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues, plural, section, table, text } from './output.js';

interface WouldMake {
  endpoint: string | null;
  queue: string;
  title: string;
  kind: string | null;
}

/** A quarantine item; the contract leaves `would_make` open, the CLI reads its rows. */
type Item = Omit<QuarantineItem, 'would_make'> & { would_make: WouldMake[] | null };

/** show's item, with its delivery as the CLI reads it. */
interface ItemDetail extends Item {
  event: {
    id: string;
    provider: string;
    type: string | null;
    actor: string | null;
    received_at: string;
    headers: Record<string, string>;
    payload: unknown;
  } | null;
}

interface ListOptions extends CommonOptions {
  state?: string;
  limit?: string;
}

interface DiscardOptions extends CommonOptions {
  reason: string;
}

export const STATES = ['held', 'released', 'discarded', 'expired'] as const;
/** The payload text `show` prints before clipping; --json prints it whole. */
export const PAYLOAD_SHOWN = 4000;

const itemPath = (id: string) => `/api/v1/quarantine/${encodeURIComponent(id)}`;

export function registerQuarantine(program: Command): void {
  const group = oneLineErrors(
    program.command('quarantine').description("events held because the webhook doesn't trust their actor"),
  );
  apiCommand(group, 'list', 'quarantined events, newest first (held ones unless --state)')
    .option('--state <S>', `only items in this state: ${STATES.join(', ')} (default held)`)
    .option('--limit <N>', 'how many (1–200, default 50)')
    .action(run(list));
  apiCommand(group, 'show', 'one item: actor, reason, what it would make, and the payload')
    .argument('<ID>', 'quarantine item id')
    .action(run(show));
  apiCommand(group, 'release', 'route the event as if its actor were trusted, under the rules as they are now')
    .argument('<ID>', 'quarantine item id')
    .action(run(release));
  apiCommand(group, 'discard', 'drop the event for good, keeping a reason')
    .argument('<ID>', 'quarantine item id')
    .requiredOption('--reason <TEXT>', 'why (kept on the item)')
    .action(run(discard));
}

/** The list's query string; throws a usage error naming a bad --state or --limit. */
export function listQuery(opts: ListOptions): string {
  const params = new URLSearchParams();
  if (opts.state !== undefined) params.set('state', oneOf('--state', opts.state, STATES));
  if (opts.limit !== undefined) params.set('limit', String(integer('--limit', opts.limit, 1, 200)));
  const query = params.toString();
  return query === '' ? '' : `?${query}`;
}

const madeText = (w: WouldMake[] | null) =>
  !w || w.length === 0 ? '-' : w.length === 1 ? (w[0]?.title ?? '-') : `${plural(w.length, 'todo')}: ${w[0]?.title}…`;

async function list(opts: ListOptions): Promise<void> {
  const query = listQuery(opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ items: Item[] }>('GET', `/api/v1/quarantine${query}`);
  emit(opts.json, answer, (a) =>
    table(
      a.items,
      [
        { header: 'ID', value: (q) => q.id },
        { header: 'HELD SINCE', value: (q) => q.created_at },
        { header: 'STATE', value: (q) => q.state },
        { header: 'ACTOR', value: (q) => q.actor, max: 24 },
        { header: 'REASON', value: (q) => q.reason, max: 40 },
        { header: 'WOULD MAKE', value: (q) => madeText(q.would_make), max: 50 },
        { header: 'EVENT', value: (q) => q.event_id },
      ],
      `no ${opts.state ?? 'held'} items`,
    ),
  );
}

/** Pretty JSON of the payload, cut at `max` characters with a note saying how much was left out. */
export function payloadText(payload: unknown, max = PAYLOAD_SHOWN): { title: string; body: string } {
  const whole = JSON.stringify(payload, null, 2) ?? 'null';
  if (whole.length <= max) return { title: 'Payload:', body: `${text(whole, true)}\n` };
  const cut = whole.slice(0, whole.lastIndexOf('\n', max) > 0 ? whole.lastIndexOf('\n', max) : max);
  return {
    title: `Payload (the first ${cut.length} of ${whole.length} characters; --json prints it whole):`,
    body: `${text(cut, true)}\n…\n`,
  };
}

function detail(q: ItemDetail): string {
  const e = q.event;
  const payload = e ? payloadText(e.payload) : null;
  return (
    keyValues([
      ['id', q.id],
      ['state', q.state],
      ['held since', q.created_at],
      ['actor', q.actor ?? '(none named)'],
      ['reason', q.reason],
      ['rule', q.rule_id],
      ['webhook', q.webhook_id],
      ['event', q.event_id],
      ['type', e?.type],
      ['provider', e?.provider],
      ['received', e?.received_at],
      ...(q.state === 'held'
        ? []
        : ([
            ['resolved', q.resolved_at],
            ['resolved by', q.resolved_by],
            ['resolution', q.resolution],
            ['todos', q.todo_ids.join(' ')],
          ] as const)),
    ]) +
    section(
      q.state === 'held' ? 'Would make, if released:' : 'Would have made:',
      table(
        q.would_make ?? [],
        [
          { header: 'ENDPOINT', value: (t) => t.endpoint ?? "(the webhook's)" },
          { header: 'QUEUE', value: (t) => t.queue },
          { header: 'KIND', value: (t) => t.kind },
          { header: 'TITLE', value: (t) => t.title, max: 80 },
        ],
        'nothing',
      ),
    ) +
    (payload ? section(payload.title, payload.body) : section('Payload:', '(the event is gone: past retention)\n'))
  );
}

async function show(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ item: ItemDetail }>('GET', itemPath(id));
  emit(opts.json, answer, (a) => detail(a.item));
}

async function release(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<QuarantineReleased>('POST', `${itemPath(id)}/release`);
  emit(opts.json, answer, (a) => {
    const made = a.todos.map((t) => `todo ${t.id} on ${t.queue}${t.endpoint ? ` of ${t.endpoint}` : ''}`);
    if (made.length > 0) return `released ${id}: made ${made.join(', ')}\n`;
    return `released ${id}: ${a.outcome} under the rules as they are now; nothing was made\n`;
  });
}

async function discard(id: string, opts: DiscardOptions): Promise<void> {
  const reason = textFlag('--reason', opts.reason, 500);
  const client = await signedInClient(opts.url);
  const answer = await client.request<QuarantineDiscarded>('POST', `${itemPath(id)}/discard`, { reason });
  emit(opts.json, answer, () => `discarded ${id}: nothing was made\n`);
}
