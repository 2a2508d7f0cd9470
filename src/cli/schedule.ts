// `switchboard schedule list|show|add|pause|resume|remove` (docs/design/schedules.md): an
// endpoint's recurring todos over the REST API. Flags are checked before any request, each
// problem naming its flag; the server checks everything again (the cron expression and
// the zone included, by field).

import type { Command } from 'commander';
import type {
  Schedule,
  ScheduleAudit as AuditRow,
  ScheduleDeleted,
  ScheduleList,
  ScheduleOne,
  ScheduleShown,
} from '../client/index.js';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import {
  apiCommand,
  asFlags,
  jsonValue,
  LIMITS,
  oneLineErrors,
  queueName,
  run,
  textFlag,
  type CommonOptions,
} from './flags.js';
import { wallClock } from '../domain/zones.js';
import { CliError, EXIT } from './exit.js';
import { emit, keyValues, section, table } from './output.js';

export interface AddOptions extends CommonOptions {
  cron: string;
  title: string;
  queue: string;
  tz?: string;
  body?: string;
  payload?: string;
  kind?: string;
  priority?: string;
  paused?: boolean;
}

const schedulesPath = (endpoint: string) => `${endpointPath(endpoint)}/schedules`;
const schedulePath = (endpoint: string, id: string) => `${schedulesPath(endpoint)}/${encodeURIComponent(id)}`;

export function registerSchedule(program: Command): void {
  const group = oneLineErrors(program.command('schedule').description('recurring todos: a cron expression in a zone'));
  apiCommand(group, 'list', "list an endpoint's schedules with their next run")
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .action(run(list));
  apiCommand(group, 'show', 'show a schedule and its audit (who changed what)')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('<ID>', 'schedule id (sc_…)')
    .action(run(show));
  apiCommand(group, 'add', 'add a schedule: each occurrence puts one todo on the queue')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .requiredOption('--cron <EXPR>', 'five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5"')
    .requiredOption('--title <T>', `the todos' title, at most ${LIMITS.titleChars} characters`)
    .option('--queue <Q>', 'the queue', 'inbox')
    .option('--tz <ZONE>', 'the IANA zone the expression is read in (default: this machine’s zone)')
    .option('--body <B>', "the todos' body (text)")
    .option('--payload <JSON>', "the todos' payload, as JSON")
    .option('--kind <K>', "the todos' kind")
    .option('--priority <N>', 'the todos’ priority, -100 to 100, higher first (default 0)')
    .option('--paused', 'add it paused: it makes nothing until resumed')
    .action(run(add));
  for (const [name, paused, description] of [
    ['pause', true, 'pause a schedule: it makes nothing until resumed'],
    ['resume', false, 'resume a schedule from now (missed occurrences are not made up)'],
  ] as const) {
    apiCommand(group, name, description)
      .argument('<ENDPOINT>', 'endpoint slug or id')
      .argument('<ID>', 'schedule id (sc_…)')
      .action(run((endpoint: string, id: string, opts: CommonOptions) => setPaused(endpoint, id, paused, opts)));
  }
  apiCommand(group, 'remove', 'delete a schedule (its audit is kept)')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('<ID>', 'schedule id (sc_…)')
    .action(run(remove));
}

/** A whole number in [min, max], negatives included; a usage error naming the flag otherwise. */
function integer(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || n < min || n > max)
    throw new CliError(`${flag}: must be a whole number from ${min} to ${max}`, EXIT.usage);
  return n;
}

/** Checks the flags and builds the POST body; throws a usage error naming the bad flag. */
export function addBody(
  opts: AddOptions,
  localZone = Intl.DateTimeFormat().resolvedOptions().timeZone,
): Record<string, unknown> {
  const cron = textFlag('--cron', opts.cron, 200).trim();
  if (cron.split(/\s+/).length !== 5)
    throw new CliError('--cron: must be five fields (minute hour day-of-month month day-of-week)', EXIT.usage);
  const body: Record<string, unknown> = {
    queue: queueName('--queue', opts.queue),
    cron,
    tz: textFlag('--tz', opts.tz ?? localZone, 64),
    title: textFlag('--title', opts.title, LIMITS.titleChars),
  };
  if (opts.body !== undefined) body.body = opts.body;
  if (opts.payload !== undefined) body.payload = jsonValue('--payload', opts.payload);
  if (opts.kind !== undefined) body.kind = textFlag('--kind', opts.kind, LIMITS.kindChars);
  if (opts.priority !== undefined) body.priority = integer('--priority', opts.priority, -100, 100);
  if (opts.paused) body.paused = true;
  return body;
}

/** A run time as the board shows it: on the schedule zone's wall clock, then in UTC. */
export function runTime(iso: string | null, tz: string): string | null {
  if (iso === null) return null;
  const instant = new Date(iso);
  return `${wallClock(instant, tz)} (${instant.toISOString().replace(/\.\d{3}Z$/, 'Z')})`;
}

const stateOf = (s: Schedule) => (s.paused ? 'paused' : s.last_error ? 'error' : 'active');

export function describeSchedule(s: Schedule): string {
  return keyValues([
    ['id', s.id],
    ['queue', s.queue],
    ['cron', `${s.cron} (${s.tz})`],
    ['title', s.title],
    ['state', stateOf(s)],
    ['priority', s.priority],
    ['next run', runTime(s.next_run_at, s.tz)],
    ['last run', runTime(s.last_run_at, s.tz)],
    ['last todo', s.last_todo_id],
    ['missed', s.last_missed > 0 ? `${s.last_missed} occurrence(s) before the last run` : null],
    ['last error', s.last_error],
  ]);
}

async function list(endpoint: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<ScheduleList>('GET', schedulesPath(endpoint));
  emit(opts.json, answer, (a) =>
    table(
      a.schedules,
      [
        { header: 'ID', value: (s) => s.id },
        { header: 'QUEUE', value: (s) => s.queue },
        { header: 'CRON', value: (s) => s.cron },
        { header: 'ZONE', value: (s) => s.tz },
        { header: 'STATE', value: stateOf },
        { header: 'NEXT RUN', value: (s) => runTime(s.next_run_at, s.tz) },
        { header: 'TITLE', value: (s) => s.title, max: 50 },
      ],
      'no schedules',
    ),
  );
}

async function show(endpoint: string, id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<ScheduleShown>('GET', schedulePath(endpoint, id));
  const audit = (rows: AuditRow[]) =>
    table(
      rows,
      [
        { header: 'AT', value: (r) => r.at },
        { header: 'ACTION', value: (r) => r.action },
        { header: 'BY', value: (r) => r.actor_email ?? r.actor_human_id, max: 40 },
        {
          header: 'CHANGES',
          value: (r) => Object.keys(r.changes).join(','),
          max: 60,
        },
      ],
      '(none)',
    );
  emit(opts.json, answer, (a) => describeSchedule(a.schedule) + section('Audit:', audit(a.audit)));
}

async function add(endpoint: string, opts: AddOptions): Promise<void> {
  const body = addBody(opts);
  const client = await signedInClient(opts.url);
  const answer = await asFlags(client.request<ScheduleOne>('POST', schedulesPath(endpoint), body), {
    queue: '--queue',
    cron: '--cron',
    tz: '--tz',
    title: '--title',
    body: '--body',
    payload: '--payload',
    kind: '--kind',
    priority: '--priority',
  });
  emit(
    opts.json,
    answer,
    (a) => `added ${a.schedule.id} to ${endpoint}/${a.schedule.queue}\n${describeSchedule(a.schedule)}`,
  );
}

async function setPaused(endpoint: string, id: string, paused: boolean, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<ScheduleOne>('PATCH', schedulePath(endpoint, id), { paused });
  emit(opts.json, answer, (a) =>
    a.schedule.paused
      ? `paused ${a.schedule.id}`
      : `resumed ${a.schedule.id}: next run ${runTime(a.schedule.next_run_at, a.schedule.tz)}`,
  );
}

async function remove(endpoint: string, id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<ScheduleDeleted>('DELETE', schedulePath(endpoint, id));
  emit(opts.json, answer, (a) => `removed ${a.id}`);
}
