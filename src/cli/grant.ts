// `switchboard grant request|approve|deny|list|revoke`: hand-off grants between endpoints
// (docs/design/handoff.md, "Grants"). `request` makes an active grant when both endpoints
// are yours and a requested one when the target is another owner's; that owner approves or
// denies it; either owner revokes it. `list` shows both directions.

import type { Command } from 'commander';
import { signedInClient } from './client.js';
import { apiCommand, integer, oneLineErrors, run, type CommonOptions } from './flags.js';
import { emit, table } from './output.js';

interface Grant {
  id: string;
  from: string;
  to: string;
  queues: string[];
  state: string;
  max_priority: number | null;
  rate_per_hour: number | null;
  created_at: string;
}

interface RequestOptions extends CommonOptions {
  queue?: string[];
  maxPriority?: string;
  rate?: string;
}

const grantPath = (id: string) => `/api/v1/grants/${encodeURIComponent(id)}`;

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerGrant(program: Command): void {
  const group = oneLineErrors(
    program.command('grant').description("hand-off grants: let one agent put todos on another's queues"),
  );
  apiCommand(group, 'request', 'let FROM hand todos to TO (active if both are yours, else requested)')
    .argument('<FROM>', 'your sending endpoint (slug)')
    .argument('<TO>', 'the target endpoint (slug)')
    .requiredOption('--queue <Q>', 'a target queue the grant covers (repeat for more)', collect)
    .option('--max-priority <N>', 'the highest priority a handed-off todo may ask for (-100–100)')
    .option('--rate <N>', 'at most N hand-offs per hour')
    .action(run(request));
  apiCommand(group, 'approve', 'approve a requested grant to one of your endpoints')
    .argument('<ID>', 'grant id (gr_…)')
    .action(run((id: string, opts: CommonOptions) => decide(id, 'approve', opts)));
  apiCommand(group, 'deny', 'deny a requested grant to one of your endpoints')
    .argument('<ID>', 'grant id (gr_…)')
    .action(run((id: string, opts: CommonOptions) => decide(id, 'deny', opts)));
  apiCommand(group, 'list', 'grants from and to your endpoints').action(run(list));
  apiCommand(group, 'revoke', 'revoke a grant (either side): no new hand-off under it')
    .argument('<ID>', 'grant id (gr_…)')
    .action(run(revoke));
}

/** The request body; throws a usage error naming a bad --max-priority or --rate. */
export function requestBody(from: string, to: string, opts: RequestOptions): Record<string, unknown> {
  return {
    from,
    to,
    queues: opts.queue ?? [],
    ...(opts.maxPriority !== undefined ? { max_priority: integer('--max-priority', opts.maxPriority, -100, 100) } : {}),
    ...(opts.rate !== undefined ? { rate_per_hour: integer('--rate', opts.rate, 1, 1_000_000) } : {}),
  };
}

const line = (verb: string, g: Grant) =>
  `${verb} ${g.id}: ${g.from} → ${g.to} [${g.queues.join(', ')}] is ${g.state}\n`;

async function request(from: string, to: string, opts: RequestOptions): Promise<void> {
  const body = requestBody(from, to, opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ grant: Grant }>('POST', '/api/v1/grants', body);
  emit(
    opts.json,
    answer,
    (a) =>
      line(a.grant.state === 'requested' ? 'requested' : 'granted', a.grant) +
      (a.grant.state === 'requested'
        ? `the owner of ${a.grant.to} approves it with: switchboard grant approve ${a.grant.id}\n`
        : ''),
  );
}

async function decide(id: string, action: 'approve' | 'deny', opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ grant: Grant }>('POST', `${grantPath(id)}/${action}`);
  emit(opts.json, answer, (a) => line(action === 'approve' ? 'approved' : 'denied', a.grant));
}

async function revoke(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ grant: Grant }>('DELETE', grantPath(id));
  emit(opts.json, answer, (a) => line('revoked', a.grant));
}

async function list(opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ grants: Grant[] }>('GET', '/api/v1/grants');
  emit(opts.json, answer, (a) =>
    table(
      a.grants,
      [
        { header: 'ID', value: (g) => g.id },
        { header: 'FROM', value: (g) => g.from },
        { header: 'TO', value: (g) => g.to },
        { header: 'QUEUES', value: (g) => g.queues.join(','), max: 40 },
        { header: 'STATE', value: (g) => g.state },
        { header: 'MAX PRIORITY', value: (g) => (g.max_priority === null ? '-' : String(g.max_priority)) },
        { header: 'RATE/H', value: (g) => (g.rate_per_hour === null ? '-' : String(g.rate_per_hour)) },
        { header: 'CREATED', value: (g) => g.created_at },
      ],
      'no grants',
    ),
  );
}
