// `switchboard todo push (add)|list|show|retry|cancel|answer`: a human's view of an
// endpoint's todos over the REST API (retry and cancel with --filter: src/cli/todo-bulk.ts;
// answer: src/cli/todo-answer.ts). Checks flag values before any request; claiming and
// completing are the agent's verbs (MCP), not the CLI's.

import { linksText, type Links } from './todo-links.js';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Todo, TodoAttempt as Attempt, TodoList, TodoOne, TodoPushed } from '../client/index.js';
import { PRIORITY_BOUNDS, TODO_STATES } from '../domain/todo.js';
import { describeWaiting } from '../domain/waiting.js';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { CliError, EXIT } from './exit.js';
import {
  apiCommand,
  collect,
  exclusive,
  integer,
  jsonValue,
  LIMITS,
  oneLineErrors,
  oneOf,
  queueName,
  rfc3339Time,
  run,
  textFlag,
  timeIn,
  wholeNumber,
  type CommonOptions,
} from './flags.js';
import { emit, keyValues, section, table, text } from './output.js';
import { bulk, FILTER_KEYS, type BulkOptions } from './todo-bulk.js';
import { answersSection, registerAnswer } from './todo-answer.js';
import type { TodoAnswer } from '../domain/asks.js';
import { pushFile } from './todo-push.js';
import { routeText, type TodoRoute } from './todo-route.js';

export interface PushOptions extends CommonOptions {
  /** Required unless --file is given. */
  title?: string;
  file?: string;
  queue: string;
  body?: string;
  bodyFile?: string;
  payload?: string;
  kind?: string;
  idempotencyKey?: string;
  maxAttempts?: string;
  priority?: string;
  at?: string;
  in?: string;
}

interface ListOptions extends CommonOptions {
  queue?: string;
  state?: string;
  limit?: string;
  cursor?: string;
}

const todoPath = (id: string) => `/api/v1/todos/${encodeURIComponent(id)}`;

export function registerTodo(program: Command): void {
  const group = oneLineErrors(program.command('todo').description("push and inspect an endpoint's todos"));
  apiCommand(group, 'push', 'put a todo on one of an endpoint’s queues, or many from a JSON-lines file')
    .alias('add')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .option('--title <T>', `what to do, at most ${LIMITS.titleChars} characters (required without --file)`)
    .option('--file <F>', 'push one todo per JSON line of F (- for stdin), in batches of up to 1,000')
    .option('--queue <Q>', 'the queue (with --file: for lines that name none)', 'inbox')
    .option('--body <B>', 'details for the agent (text)')
    .option('--body-file <F>', 'read the body from a file (- for stdin)')
    .option('--payload <JSON>', 'structured input for the agent, as JSON')
    .option('--kind <K>', 'a label agents can filter on')
    .option('--idempotency-key <K>', 'a second push with the same key answers the first todo')
    .option('--max-attempts <N>', `attempts before the todo is dead-lettered, 1–${LIMITS.maxAttempts} (default 5)`)
    .option('--priority <N>', 'higher is claimed first, -100 to 100 (default 0)')
    .option('--at <TIME>', 'not claimable before this RFC 3339 time, e.g. 2030-01-31T18:00:00Z')
    .option('--in <DURATION>', 'not claimable before this long from now, e.g. 90s, 15m, 2h, 1d')
    .action(run(push));
  apiCommand(group, 'list', "list an endpoint's todos, newest first")
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .option('--queue <Q>', 'only this queue')
    .option('--state <S>', `only this state: ${TODO_STATES.join(', ')}`)
    .option('--limit <N>', `at most N todos, 1–${LIMITS.listMax} (default ${LIMITS.listDefault})`)
    .option('--cursor <C>', 'continue after the previous page (printed at its end)')
    .action(run(list));
  apiCommand(group, 'show', 'show a todo and its attempts').argument('<ID>', 'todo id (td_…)').action(run(show));
  for (const [verb, what, one] of [
    ['retry', 'make a failed or canceled todo pending again, with fresh attempts', retry],
    ['cancel', 'cancel a todo that is not finished', cancel],
  ] as const) {
    apiCommand(group, verb, `${what}; with --filter, every matching todo of an endpoint`)
      .argument('<ID>', 'todo id (td_…), or with --filter the endpoint slug or id')
      .option('--filter <KEY=VALUE>', `bulk: only todos matching (repeatable; ${FILTER_KEYS.join(', ')})`, collect)
      .option('--dry-run', 'bulk: count the matching todos, change nothing')
      .action(run((target: string, opts: BulkOptions) => (opts.filter ? bulk(verb, target, opts) : one(target, opts))));
  }
  registerAnswer(group);
}

/** Checks the flags and builds the POST body; throws a usage error naming the bad flag. */
export async function pushBody(opts: PushOptions, now = Date.now()): Promise<Record<string, unknown>> {
  exclusive(['--body', opts.body], ['--body-file', opts.bodyFile]);
  if (opts.title === undefined) throw new CliError('--title: required (or push many with --file)', EXIT.usage);
  const body: Record<string, unknown> = {
    queue: queueName('--queue', opts.queue),
    title: textFlag('--title', opts.title, LIMITS.titleChars),
  };
  const text = opts.bodyFile !== undefined ? await readBodyFile(opts.bodyFile) : opts.body;
  if (text !== undefined) {
    if (Buffer.byteLength(text) > LIMITS.bodyBytes)
      throw new CliError(
        `${opts.bodyFile ? '--body-file' : '--body'}: larger than ${LIMITS.bodyBytes} bytes`,
        EXIT.usage,
      );
    body.body = text;
  }
  if (opts.payload !== undefined) body.payload = jsonValue('--payload', opts.payload);
  if (opts.kind !== undefined) body.kind = textFlag('--kind', opts.kind, LIMITS.kindChars);
  if (opts.idempotencyKey !== undefined)
    body.idempotency_key = textFlag('--idempotency-key', opts.idempotencyKey, LIMITS.idempotencyKeyChars);
  if (opts.maxAttempts !== undefined)
    body.max_attempts = wholeNumber('--max-attempts', opts.maxAttempts, 1, LIMITS.maxAttempts);
  if (opts.priority !== undefined)
    body.priority = integer('--priority', opts.priority, PRIORITY_BOUNDS.min, PRIORITY_BOUNDS.max);
  exclusive(['--at', opts.at], ['--in', opts.in]);
  if (opts.at !== undefined) body.not_before = rfc3339Time('--at', opts.at);
  if (opts.in !== undefined) body.not_before = timeIn('--in', opts.in, now);
  return body;
}

async function readBodyFile(path: string): Promise<string> {
  try {
    return path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(
      `--body-file: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      EXIT.usage,
    );
  }
}

async function readStdin(): Promise<string> {
  let data = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) data += chunk as string;
  return data;
}

/** Checks the flags and builds the query string (with its leading ? when not empty). */
export function listQuery(opts: ListOptions): string {
  const query = new URLSearchParams();
  if (opts.queue !== undefined) query.set('queue', queueName('--queue', opts.queue));
  if (opts.state !== undefined) query.set('state', oneOf('--state', opts.state, TODO_STATES));
  if (opts.limit !== undefined) query.set('limit', String(wholeNumber('--limit', opts.limit, 1, LIMITS.listMax)));
  if (opts.cursor !== undefined) query.set('cursor', textFlag('--cursor', opts.cursor, 1000));
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/** The single-todo flags, which a --file push takes from each line instead. */
const SINGLE_FLAGS = ['title', 'body', 'bodyFile', 'payload', 'kind', 'idempotencyKey', 'maxAttempts'] as const;
const flagName = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

async function push(endpoint: string, opts: PushOptions): Promise<void> {
  if (opts.file !== undefined) {
    const single = SINGLE_FLAGS.find((key) => opts[key] !== undefined);
    if (single) throw new CliError(`${flagName(single)}: not with --file (each line is a whole todo)`, EXIT.usage);
    return pushFile(endpoint, { file: opts.file, queue: opts.queue, json: opts.json, url: opts.url });
  }
  const body = await pushBody(opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<TodoPushed>('POST', `${endpointPath(endpoint)}/todos`, body);
  emit(opts.json, answer, (a) =>
    a.created
      ? `pushed ${a.todo.id} to ${endpoint}/${a.todo.queue} (${a.todo.state})`
      : `not pushed: ${a.todo.id} already has this idempotency key (${a.todo.state})`,
  );
}

async function list(endpoint: string, opts: ListOptions): Promise<void> {
  const query = listQuery(opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<TodoList>('GET', `${endpointPath(endpoint)}/todos${query}`);
  emit(opts.json, answer, (a) => {
    const rows = table(
      a.todos,
      [
        { header: 'ID', value: (t) => t.id },
        { header: 'QUEUE', value: (t) => t.queue },
        { header: 'STATE', value: (t) => t.state },
        { header: 'PRIO', value: (t) => t.priority },
        { header: 'ATTEMPT', value: (t) => `${t.attempt}/${t.max_attempts}` },
        { header: 'WAITING', value: (t) => waitingText(t), max: 40 },
        { header: 'CREATED', value: (t) => t.created_at },
        { header: 'TITLE', value: (t) => t.title, max: 60 },
      ],
      'no todos',
    );
    return a.next_cursor ? `${rows}(more: add --cursor ${a.next_cursor})\n` : rows;
  });
}

async function show(id: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{
    todo: Todo;
    attempts: Attempt[];
    answers?: TodoAnswer[];
    route?: TodoRoute;
    links?: Links;
  }>('GET', todoPath(id));
  emit(
    opts.json,
    answer,
    (a) =>
      describeTodo(a.todo) +
      section('Attempts:', attemptsTable(a.attempts)) +
      answersSection(a.answers) +
      linksText(a.links) +
      routeText(a.route),
  );
}

async function retry(id: string, opts: BulkOptions): Promise<void> {
  if (opts.dryRun) throw new CliError('--dry-run: only with --filter (a bulk retry)', EXIT.usage);
  const client = await signedInClient(opts.url);
  const answer = await client.request<TodoOne>('POST', `${todoPath(id)}/retry`);
  emit(opts.json, answer, (a) => `${a.todo.id} is ${a.todo.state} again, attempts reset`);
}

async function cancel(id: string, opts: BulkOptions): Promise<void> {
  if (opts.dryRun) throw new CliError('--dry-run: only with --filter (a bulk cancel)', EXIT.usage);
  const client = await signedInClient(opts.url);
  const answer = await client.request<TodoOne>('POST', `${todoPath(id)}/cancel`);
  emit(opts.json, answer, (a) => `${a.todo.id} is ${a.todo.state}`);
}

/** Why the todo waits, in words (docs/design/todos.md, "Why is it waiting"); null when it does not. */
function waitingText(t: Todo): string | null {
  const { waiting } = t;
  return waiting ? describeWaiting(waiting, (iso) => text(iso)) : null;
}

export function describeTodo(t: Todo): string {
  return keyValues([
    ['id', t.id],
    ['queue', t.queue],
    ['title', t.title],
    ['state', t.state],
    ['priority', t.priority],
    ['not before', t.not_before],
    ['waiting', waitingText(t)],
    ['attempt', `${t.attempt} of ${t.max_attempts}`],
    ['error', t.error],
    ['kind', t.kind],
    ['source', t.source],
    ['idempotency key', t.idempotency_key],
    ['lease expires', t.lease_expires_at],
    ['next retry', t.next_retry_at],
    ['completed', t.completed_at],
    ['created', t.created_at],
    ['updated', t.updated_at],
    ['body', t.body],
    ['payload', t.payload],
    ['result', t.result],
  ]);
}

function attemptsTable(attempts: Attempt[]): string {
  return table(
    attempts,
    [
      { header: 'SEQ', value: (a) => a.seq },
      { header: 'ATTEMPT', value: (a) => a.attempt },
      { header: 'SESSION', value: (a) => a.session_id, max: 30 },
      { header: 'CLAIMED', value: (a) => a.claimed_at },
      { header: 'ENDED', value: (a) => a.ended_at },
      { header: 'OUTCOME', value: (a) => a.outcome ?? 'open' },
      { header: 'SUMMARY', value: (a) => a.summary, max: 60 },
      { header: 'ARTIFACT', value: (a) => a.artifact, max: 60 },
    ],
    '(never claimed)',
  );
}
