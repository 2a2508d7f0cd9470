// `switchboard queue budget show|set|clear` (docs/design/admission.md, "Wire shapes"): a
// queue's admission budget over the REST API. `set` is a full replace built from the
// flags, checked before any request (each problem names its flag); the server checks
// everything again.

import type { Command } from 'commander';
import type {
  BudgetCleared,
  BudgetDetail,
  BudgetList,
  BudgetSet,
  BudgetStatus as Status,
  EndpointShown,
} from '../client/index.js';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { CliError, EXIT } from './exit.js';
import {
  asFlags,
  apiCommand,
  oneLineErrors,
  oneOf,
  queueName,
  run,
  textFlag,
  wholeNumber,
  type CommonOptions,
} from './flags.js';
import { emit, keyValues, section, table } from './output.js';

export interface SetOptions extends CommonOptions {
  perDay?: string;
  perHour?: string;
  perWeek?: string;
  tz?: string;
  start?: string;
  weekday?: string;
  maxInFlight?: string;
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const START = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

const policyPath = (endpoint: string, queue: string) =>
  `/api/v1/admission/${encodeURIComponent(`endpoint:${endpoint}`)}/${encodeURIComponent(queue)}`;

export function registerQueue(program: Command): void {
  const queue = oneLineErrors(program.command('queue').description("manage an endpoint's queues"));
  const budget = oneLineErrors(queue.command('budget').description('per-queue admission budgets'));
  apiCommand(budget, 'show', 'show budgets: all of yours, one endpoint’s, or one queue’s with its windows and audit')
    .argument('[ENDPOINT]', 'endpoint slug or id')
    .argument('[QUEUE]', 'queue name')
    .action(run(show));
  apiCommand(budget, 'set', 'set (fully replace) a queue’s budget; every claim is charged, retries included')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('<QUEUE>', 'queue name')
    .option('--per-day <N>', 'at most N claims per day')
    .option('--per-hour <N>', 'at most N claims per hour')
    .option('--per-week <N>', 'at most N claims per week')
    .option('--tz <ZONE>', 'the IANA zone the window is declared in (default: this machine’s zone)')
    .option('--start <HH:MM>', 'local time the window starts at (default 00:00)')
    .option('--weekday <DAY>', 'the day a week window starts: Mon … Sun (default Mon)')
    .option('--max-in-flight <N>', 'at most N claims at once; 0 pauses the queue')
    .action(run(set));
  apiCommand(budget, 'clear', 'remove a queue’s budget (its audit is kept)')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('<QUEUE>', 'queue name')
    .action(run(clear));
}

function usage(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** Checks the flags and builds the PUT body; throws a usage error naming the bad flag. */
export function budgetBody(opts: SetOptions, localZone = Intl.DateTimeFormat().resolvedOptions().timeZone) {
  const periods = (
    [
      ['day', '--per-day', opts.perDay],
      ['hour', '--per-hour', opts.perHour],
      ['week', '--per-week', opts.perWeek],
    ] as const
  ).filter(([, , v]) => v !== undefined);
  if (periods.length > 1) throw usage(`${periods.map((p) => p[1]).join(' and ')}: give one, not several`);
  const [period, flag, value] = periods[0] ?? [];
  if (opts.maxInFlight === undefined && period === undefined)
    throw usage('--max-in-flight or one of --per-day, --per-hour, --per-week: a budget needs a limit');
  for (const [f, v] of [
    ['--tz', opts.tz],
    ['--start', opts.start],
    ['--weekday', opts.weekday],
  ] as const) {
    if (v !== undefined && period === undefined) throw usage(`${f}: only with --per-day, --per-hour or --per-week`);
  }
  if (opts.weekday !== undefined && period !== 'week') throw usage('--weekday: only with --per-week');
  const start = opts.start ?? '00:00';
  if (!START.test(start)) throw usage('--start: must be HH:MM, 00:00 to 23:59');
  const window =
    period === undefined
      ? null
      : {
          period,
          tz: textFlag('--tz', opts.tz ?? localZone, 64),
          start,
          ...(period === 'week' ? { weekday: oneOf('--weekday', opts.weekday ?? 'Mon', WEEKDAYS) } : {}),
        };
  return {
    max_in_flight: opts.maxInFlight === undefined ? null : wholeNumber('--max-in-flight', opts.maxInFlight, 0, 10_000),
    max_claims_per_window: value === undefined || flag === undefined ? null : wholeNumber(flag, value, 0, 1_000_000),
    window,
  };
}

async function show(endpoint: string | undefined, queue: string | undefined, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  if (endpoint !== undefined && queue !== undefined) {
    const detail = await client.request<BudgetDetail>('GET', policyPath(endpoint, queueName('QUEUE', queue)));
    emit(opts.json, detail, describeDetail);
    return;
  }
  const answer = await client.request<BudgetList>('GET', '/api/v1/admission');
  let mine = answer;
  if (endpoint !== undefined) {
    // An unknown or another human's endpoint is not_found, as on every admission route.
    const { endpoint: e } = await client.request<EndpointShown>('GET', endpointPath(endpoint));
    mine = { policies: answer.policies.filter((p) => p.endpoint_id === e.id) };
  }
  emit(opts.json, mine, (a) =>
    table(
      a.policies,
      [
        { header: 'SCOPE', value: (p) => p.scope },
        { header: 'QUEUE', value: (p) => p.queue },
        {
          header: 'STATE',
          value: (p) => (p.status.reason ? `${p.status.state} (${p.status.reason})` : p.status.state),
        },
        { header: 'USED', value: (p) => usedOf(p) },
        { header: 'IN FLIGHT', value: (p) => inFlightOf(p) },
        { header: 'PENDING', value: (p) => p.pending },
        { header: 'RESETS AT', value: (p) => p.usage?.window_resets_at },
      ],
      'no budgets',
    ),
  );
}

const usedOf = (s: Status) =>
  s.policy.max_claims_per_window === null ? '-' : `${s.usage?.used ?? 0}/${s.policy.max_claims_per_window}`;
const inFlightOf = (s: Status) =>
  s.policy.max_in_flight === null
    ? String(s.usage?.in_flight ?? 0)
    : `${s.usage?.in_flight ?? 0}/${s.policy.max_in_flight}`;
const windowText = (w: Status['policy']['window']) =>
  w ? `${w.period} from ${w.period === 'week' ? `${w.weekday} ` : ''}${w.start} ${w.tz}` : null;

function describe(s: Status): string {
  return keyValues([
    ['queue', s.queue],
    ['state', s.status.reason ? `${s.status.state} (${s.status.reason})` : s.status.state],
    ['next eligible', s.status.next_eligible_at],
    ['claims per window', usedOf(s)],
    ['window', windowText(s.policy.window)],
    ['resets at', s.usage?.window_resets_at],
    ['in flight', inFlightOf(s)],
    ['pending', s.pending],
  ]);
}

function describeDetail(d: BudgetDetail): string {
  const windows = table(
    d.windows,
    [
      { header: 'WINDOW START', value: (w) => w.window_start },
      { header: 'USED', value: (w) => w.used },
    ],
    '(no claims yet)',
  );
  const audit = table(
    d.audit,
    [
      { header: 'AT', value: (a) => a.at },
      { header: 'ACTION', value: (a) => a.action },
      { header: 'BY', value: (a) => a.actor_email ?? a.actor_human_id, max: 40 },
      { header: 'AGENT', value: (a) => a.actor_endpoint_id },
    ],
    '(none)',
  );
  return describe(d) + section('Windows:', windows) + section('Audit:', audit);
}

async function set(endpoint: string, queue: string, opts: SetOptions): Promise<void> {
  const body = budgetBody(opts);
  const client = await signedInClient(opts.url);
  const answer = await asFlags(
    client.request<BudgetSet>('PUT', policyPath(endpoint, queueName('QUEUE', queue)), body),
    {
      max_in_flight: '--max-in-flight',
      'window.tz': '--tz',
      'window.start': '--start',
      'window.weekday': '--weekday',
    },
  );
  emit(
    opts.json,
    answer,
    (a) => `${a.created ? 'set' : 'replaced'} the budget of ${endpoint}/${a.queue}\n${describe(a)}`,
  );
}

async function clear(endpoint: string, queue: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<BudgetCleared>('DELETE', policyPath(endpoint, queueName('QUEUE', queue)));
  emit(opts.json, answer, (a) => `cleared the budget of ${endpoint}/${a.queue}: it is claimed as if it never had one`);
}
