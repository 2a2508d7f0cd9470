// `switchboard webhook rules|test-rules|trust`: a webhook's routing rules
// (docs/design/routing.md) — show them, replace them from a JSON file, dry-run them
// against a payload or the latest deliveries, and set or clear the trusted actors. The
// server compiles and checks everything; a refused rule comes back as its message, which
// names the field (`rules[1].when`) and the position in the expression.

import type { RoutingRulesTested, RoutingTrust as Trust, RoutingTrustSet } from '../client/index.js';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ApiError, signedInClient } from './client.js';
import { CliError, EXIT } from './exit.js';
import {
  apiCommand,
  asFlags,
  collect,
  exclusive,
  oneOf,
  run,
  textFlag,
  wholeNumber,
  type CommonOptions,
} from './flags.js';
import { emit, keyValues, plural, table, text } from './output.js';

interface Rule {
  id: string;
  name: string;
  when: string;
  then: { action: string; reason?: string; queue?: string; endpoints?: string[]; title?: string };
}

/** GET answers the trust gate too (RoutingRulesShown), PUT only the rules; `then` as the CLI reads it. */
interface RulesAnswer {
  rules: Rule[];
  default: string;
  trusted_actors?: Trust;
}

interface RulesOptions extends CommonOptions {
  set?: string;
  default?: string;
}

interface TestOptions extends CommonOptions {
  payload?: string;
  eventType?: string;
  actor?: string;
  header?: string[];
  last?: string;
  rules?: string;
  default?: string;
}

interface TrustOptions extends CommonOptions {
  actor?: string[];
  when?: string;
  none?: boolean;
  off?: boolean;
}

const DEFAULTS = ['route', 'drop'] as const;
/** The most deliveries one dry run replays (the server's DRY_RUN_MAX). */
const LAST_MAX = 50;

const webhookPath = (id: string) => `/api/v1/webhooks/${encodeURIComponent(id)}`;

export function registerRoutingCommands(group: Command): void {
  apiCommand(group, 'rules', "show a webhook's routing rules, or replace them with --set")
    .argument('<ID>', 'webhook id')
    .option('--set <FILE>', 'replace the rules with a JSON file (`-`: stdin): {rules, default} or an array of rules')
    .option('--default <D>', 'with --set: what happens when no rule matches, route or drop')
    .action(run(rules));
  apiCommand(group, 'test-rules', 'dry-run the rules on a payload, or on the latest deliveries; nothing is written')
    .argument('<ID>', 'webhook id')
    .option('--payload <FILE>', 'a delivery body (JSON) to route, as the provider sends it (`-`: stdin)')
    .option('--event-type <T>', "with --payload: the event's type (default: read from the payload and headers)")
    .option('--actor <A>', "with --payload: the event's actor (default: read from the payload)")
    .option('--header <K=V>', 'with --payload: a delivery header (repeatable)', collect)
    .option('--last <N>', `replay the webhook's latest N deliveries (1–${LAST_MAX}, default ${LAST_MAX})`)
    .option('--rules <FILE>', 'test a draft instead of the saved rules: JSON as for `rules --set` (`-`: stdin)')
    .option('--default <D>', 'the default to test with, route or drop')
    .action(run(testRules));
  apiCommand(group, 'trust', 'set who a webhook trusts; a routed event from anyone else is quarantined')
    .argument('<ID>', 'webhook id')
    .option('--actor <LOGIN>', 'a trusted provider login or id (repeatable)', collect)
    .option('--when <EXPR>', 'a CEL expression that also trusts an actor')
    .option('--none', 'trust nobody: every event a rule would route is quarantined')
    .option('--off', 'turn the gate off: every actor is trusted')
    .action(run(trust));
}

function usage(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** A file's text, or stdin's for `-`; a missing file is a usage error naming the flag. */
export async function readInput(flag: string, file: string): Promise<string> {
  if (file === '-') {
    let data = '';
    process.stdin.setEncoding('utf8');
    for await (const chunk of process.stdin) data += chunk as string;
    return data;
  }
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw usage(`${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The JSON in a file or stdin; not JSON is a usage error naming the flag and the parser's complaint. */
export async function readJson(flag: string, file: string): Promise<unknown> {
  const raw = await readInput(flag, file);
  if (raw.trim() === '') throw usage(`${flag}: ${file === '-' ? 'stdin' : file} is empty`);
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw usage(`${flag}: ${file === '-' ? 'stdin' : file} is not valid JSON (${(err as Error).message})`);
  }
}

/** `{rules, default}` or a bare array of rules, as the PUT body; `--default` wins over the file's. */
export function rulesBody(flag: string, value: unknown, defaultFlag: string | undefined): Record<string, unknown> {
  let body: Record<string, unknown>;
  if (Array.isArray(value)) body = { rules: value };
  else if (typeof value === 'object' && value !== null && Array.isArray((value as { rules?: unknown }).rules))
    body = { ...(value as Record<string, unknown>) };
  else throw usage(`${flag}: must hold {"rules": [...], "default": ...} or an array of rules`);
  if (defaultFlag !== undefined) body.default = oneOf('--default', defaultFlag, DEFAULTS);
  return body;
}

/** The server's refusal of `rules[i]…`, with the rule's name from the file so it can be found. */
async function namingRule<T>(request: Promise<T>, sent: unknown[], flag: string): Promise<T> {
  try {
    return await request;
  } catch (err) {
    if (!(err instanceof ApiError) || err.field === undefined) throw err;
    const at = /^rules\[(\d+)\]/.exec(err.field);
    const rule = at ? (sent[Number(at[1])] as { name?: unknown } | undefined) : undefined;
    if (!at || typeof rule?.name !== 'string') throw err;
    const where = `${flag}: rule ${Number(at[1]) + 1} ("${rule.name}")`;
    throw new ApiError(`${err.message} [${where}]`, err.code, err.status, err.details);
  }
}

function actionText(then: Rule['then']): string {
  if (then.action !== 'route') return then.reason ? `${then.action}: ${then.reason}` : then.action;
  const parts = ['route'];
  if (then.endpoints) parts.push(`to ${then.endpoints.join(',')}`);
  if (then.queue) parts.push(`queue ${then.queue}`);
  return parts.join(' ');
}

function trustText(t: Trust): string {
  if (!t.enforced) return "off: every actor's events route";
  const actors = t.actors && t.actors.length > 0 ? `actors ${t.actors.join(', ')}` : 'no actors listed';
  const when = t.when ? `; also trusted when ${t.when}` : '';
  return `on: ${actors}${when}; what a rule routes from anyone else is quarantined`;
}

function rulesText(a: RulesAnswer): string {
  const rows = a.rules.map((r, i) => ({ ...r, n: i + 1 }));
  return (
    table(
      rows,
      [
        { header: '#', value: (r) => r.n },
        { header: 'ID', value: (r) => r.id },
        { header: 'NAME', value: (r) => r.name, max: 30 },
        { header: 'WHEN', value: (r) => r.when, max: 60 },
        { header: 'ACTION', value: (r) => actionText(r.then), max: 50 },
      ],
      'no rules',
    ) +
    `default: ${a.default} (when no rule matches)\n` +
    (a.trusted_actors ? `trust gate: ${text(trustText(a.trusted_actors))}\n` : '')
  );
}

async function rules(id: string, opts: RulesOptions): Promise<void> {
  if (opts.set === undefined) {
    if (opts.default !== undefined) throw usage('--default: only with --set');
    const client = await signedInClient(opts.url);
    const answer = await client.request<RulesAnswer>('GET', `${webhookPath(id)}/rules`);
    emit(opts.json, answer, rulesText);
    return;
  }
  const body = rulesBody('--set', await readJson('--set', opts.set), opts.default);
  const client = await signedInClient(opts.url);
  const answer = await namingRule(
    client.request<RulesAnswer>('PUT', `${webhookPath(id)}/rules`, body),
    body.rules as unknown[],
    '--set',
  );
  emit(opts.json, answer, (a) => `saved ${plural(a.rules.length, 'rule')} on webhook ${id}\n` + rulesText(a));
}

/** `K=V` as a header; the name is lowercased as the server reads it. */
export function headerFlag(value: string): [string, string] {
  const eq = value.indexOf('=');
  if (eq <= 0) throw usage(`--header: "${value}" is not NAME=VALUE`);
  return [value.slice(0, eq).trim().toLowerCase(), value.slice(eq + 1)];
}

/** Checks the flags and builds the dry run's body (without the files' contents). */
export function testBody(opts: TestOptions): Record<string, unknown> {
  exclusive(['--payload', opts.payload], ['--last', opts.last]);
  if (opts.payload === '-' && opts.rules === '-') throw usage('--rules: stdin is already --payload; give a file');
  const event: Record<string, unknown> = {};
  if (opts.eventType !== undefined) event.type = textFlag('--event-type', opts.eventType, 200);
  if (opts.actor !== undefined) event.actor = textFlag('--actor', opts.actor, 200);
  if (opts.header !== undefined) event.headers = Object.fromEntries(opts.header.map(headerFlag));
  if (Object.keys(event).length > 0 && opts.payload === undefined) {
    const flag = opts.eventType !== undefined ? '--event-type' : opts.actor !== undefined ? '--actor' : '--header';
    throw usage(`${flag}: only with --payload (a replayed delivery has its own)`);
  }
  const body: Record<string, unknown> = {};
  if (Object.keys(event).length > 0) body.event = event;
  if (opts.last !== undefined) body.last = wholeNumber('--last', opts.last, 1, LAST_MAX);
  if (opts.default !== undefined) body.default = oneOf('--default', opts.default, DEFAULTS);
  return body;
}

type Predicted = RoutingRulesTested['results'][number];

function predictedText(r: Predicted): string {
  const made =
    r.todos.length === 0
      ? ''
      : table(
          r.todos,
          [
            { header: 'ENDPOINT', value: (t) => t.endpoint ?? "(the webhook's)" },
            { header: 'QUEUE', value: (t) => t.queue },
            { header: 'TITLE', value: (t) => t.title, max: 70 },
          ],
          '',
        )
          .split('\n')
          .map((l) => (l === '' ? l : `    ${l}`))
          .join('\n');
  const todosLine = r.action === 'quarantined' ? 'would make, if released' : 'would make';
  return (
    keyValues([
      ['event', r.event_id ?? 'payload'],
      ['rule', r.rule_id === 'default' ? 'default (no rule matched)' : `${r.rule_name} (${r.rule_id})`],
      ['action', r.action],
      ...(r.reason !== undefined ? [['reason', r.reason] as const] : []),
      ...(r.once !== undefined ? [['work order', r.once] as const] : []),
      [todosLine, r.todos.length === 0 ? 'nothing' : plural(r.todos.length, 'todo')],
    ]) + made
  );
}

async function testRules(id: string, opts: TestOptions): Promise<void> {
  const body = testBody(opts);
  if (opts.payload !== undefined) body.payload = await readJson('--payload', opts.payload);
  let draft: unknown[] | undefined;
  if (opts.rules !== undefined) {
    const rulesFile = rulesBody('--rules', await readJson('--rules', opts.rules), opts.default);
    draft = rulesFile.rules as unknown[];
    body.rules = draft;
    if (rulesFile.default !== undefined) body.default = rulesFile.default;
  }
  const client = await signedInClient(opts.url);
  const request = asFlags(client.request<RoutingRulesTested>('POST', `${webhookPath(id)}/rules/test`, body), {
    payload: '--payload',
    last: '--last',
    default: '--default',
  });
  const answer = await (draft ? namingRule(request, draft, '--rules') : request);
  emit(opts.json, answer, (a) =>
    a.results.length === 0
      ? 'no deliveries to replay: give one with --payload FILE\n'
      : a.results.map(predictedText).join('\n'),
  );
}

/** Checks the flags and builds the PUT body, or null for --off (a DELETE). */
export function trustBody(opts: TrustOptions): Record<string, unknown> | null {
  if (opts.off) {
    const other = opts.actor ? '--actor' : opts.when !== undefined ? '--when' : opts.none ? '--none' : null;
    if (other) throw usage(`--off and ${other}: give one, not both`);
    return null;
  }
  if (opts.none && opts.actor) throw usage('--none and --actor: give one, not both');
  if (!opts.none && !opts.actor && opts.when === undefined)
    throw usage('--actor: give the trusted logins (repeatable), --when EXPR, --none, or --off');
  const actors = (opts.actor ?? []).map((a) => textFlag('--actor', a, 200));
  return { actors, ...(opts.when !== undefined ? { when: textFlag('--when', opts.when, 1024) } : {}) };
}

async function trust(id: string, opts: TrustOptions): Promise<void> {
  const body = trustBody(opts);
  const client = await signedInClient(opts.url);
  const path = `${webhookPath(id)}/trusted-actors`;
  const answer =
    body === null
      ? await client.request<RoutingTrustSet>('DELETE', path)
      : await asFlags(client.request<RoutingTrustSet>('PUT', path, body), { when: '--when' });
  emit(opts.json, answer, (a) => `trust gate of webhook ${id}: ${text(trustText(a.trusted_actors))}\n`);
}
