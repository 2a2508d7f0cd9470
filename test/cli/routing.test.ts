// Pins `switchboard webhook rules|test-rules|trust` and `switchboard quarantine
// list|show|release|discard` end to end: the compiled CLI against a real server. Rules are
// set from a file (a bare array, and {rules, default} on stdin); a rule that does not
// compile exits 2 with the server's field and position and the rule's name; the dry run
// predicts a payload's todo; the trust gate goes on and off; a token webhook that trusts
// nobody quarantines a real delivery, which is shown, released and discarded; and `todo
// show` prints the route of a todo a rule made (the event, the rule, the steps).

import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, type CliRun } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { endpointOf, owner, server } from '../doorbell/world.js';

const { pool, url } = await testDatabase('cli_routing');
const s = await server(url, 'cli-routing');
const me = await owner(pool);
const dir = await mkdtemp(join(tmpdir(), 'switchboard-routing-'));
const ep = await endpointOf(pool, me.humanId, 'router');

function sb(args: string[], input = ''): Promise<CliRun> {
  return runCli([...args, '--url', s.url], { XDG_CONFIG_HOME: dir, SWITCHBOARD_TOKEN: me.token }, input);
}

async function ok(args: string[], input = ''): Promise<string> {
  const r = await sb(args, input);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
async function json(args: string[], input = ''): Promise<any> {
  return JSON.parse(await ok([...args, '--json'], input));
}

async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

const created = await json(['webhook', 'create', ep.slug, '--queue', 'inbox', '--name', 'tickets']);
const webhookId = created.webhook.id as string;
const hookPath = new URL(created.url as string).pathname;

const RULES = [
  { name: 'drop pings', when: 'payload.?kind.orValue("") == "ping"', then: { action: 'drop', reason: 'pings' } },
  {
    name: 'urgent tickets',
    when: 'payload.?urgent.orValue(false) == true',
    then: { action: 'route', title: 'Urgent: {{ payload.ticket }}', kind: 'urgent', priority: 10 },
  },
];

async function deliver(body: unknown): Promise<{ status: number; answer: Record<string, unknown> }> {
  const res = await fetch(`${s.url}${hookPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, answer: (await res.json()) as Record<string, unknown> };
}

test('rules: shown as a table with the default and the trust gate; --set from a file or stdin', async () => {
  const empty = await ok(['webhook', 'rules', webhookId]);
  assert.match(empty, /^no rules\ndefault: route \(when no rule matches\)\ntrust gate: off/);

  const saved = await ok([
    'webhook',
    'rules',
    webhookId,
    '--set',
    await file('rules.json', RULES),
    '--default',
    'drop',
  ]);
  assert.match(saved, /^saved 2 rules on webhook /);
  const shown = await ok(['webhook', 'rules', webhookId]);
  assert.match(shown, /^#\s+ID\s+NAME\s+WHEN\s+ACTION$/m);
  assert.match(shown, /^1\s+rl_\S+\s+drop pings\s+payload\.\?kind.*drop: pings$/m);
  assert.match(shown, /^2\s+rl_\S+\s+urgent tickets\s+.*route$/m);
  assert.match(shown, /^default: drop/m);
  const read = await json(['webhook', 'rules', webhookId]);
  assert.deepEqual(
    (read.rules as { name: string }[]).map((r) => r.name),
    ['drop pings', 'urgent tickets'],
  );
  assert.equal(read.default, 'drop');
  assert.equal(read.trusted_actors.enforced, false);

  // {rules, default} on stdin; the ids sent back keep the rules' ids.
  const again = await json(['webhook', 'rules', webhookId, '--set', '-'], JSON.stringify({ rules: read.rules }));
  assert.equal(again.default, 'route');
  assert.deepEqual(
    (again.rules as { id: string }[]).map((r) => r.id),
    (read.rules as { id: string }[]).map((r) => r.id),
  );

  const alone = await sb(['webhook', 'rules', webhookId, '--default', 'drop']);
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /^switchboard: --default: only with --set\n$/);
  const bad = await sb(['webhook', 'rules', webhookId, '--set', await file('bad.json', '{"rules": [')]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^switchboard: --set: .*bad\.json is not valid JSON/);
  const shape = await sb(['webhook', 'rules', webhookId, '--set', '-'], '{"default": "drop"}');
  assert.equal(shape.code, 2);
  assert.match(shape.stderr, /--set: must hold \{"rules": \[\.\.\.\], "default": \.\.\.\} or an array of rules/);
});

test('a rule that does not compile: exit 2, the field and the position, nothing saved', async () => {
  const broken = [RULES[0], { name: 'broken', when: 'payload.kind == ', then: { action: 'drop' } }];
  const before = await json(['webhook', 'rules', webhookId]);
  const path = await file('broken.json', broken);
  const run = await sb(['webhook', 'rules', webhookId, '--set', path]);
  assert.equal(run.code, 2, run.stderr);
  assert.match(
    run.stderr,
    /^switchboard: rules\[1\]\.when: .*position \d+.*\(invalid_argument\) \[--set: rule 2 \("broken"\)\]\n$/,
  );
  const asJson = await sb(['webhook', 'rules', webhookId, '--set', path, '--json']);
  assert.equal(asJson.code, 2);
  const error = JSON.parse(asJson.stderr).error;
  assert.equal(error.code, 'invalid_argument');
  assert.equal(error.field, 'rules[1].when');
  assert.deepEqual((await json(['webhook', 'rules', webhookId])).rules, before.rules, 'nothing was saved');
});

test('test-rules: a payload, headers and a draft; the todo it would make, touching nothing', async () => {
  await ok(['webhook', 'rules', webhookId, '--set', await file('rules2.json', RULES)]);
  const payload = await file('payload.json', { title: 'printer', ticket: 'T-42', urgent: true });
  const routed = await json(['webhook', 'test-rules', webhookId, '--payload', payload]);
  assert.equal(routed.results.length, 1);
  const [r] = routed.results;
  assert.equal(r.event_id, null);
  assert.equal(r.action, 'routed');
  assert.equal(r.rule_name, 'urgent tickets');
  assert.deepEqual(r.todos, [{ endpoint: null, queue: 'inbox', title: 'Urgent: T-42', kind: 'urgent', priority: 10 }]);

  const text = await ok(
    ['webhook', 'test-rules', webhookId, '--payload', '-', '--header', 'X-Source=cli'],
    '{"kind":"ping"}',
  );
  assert.match(text, /^event\s+payload$/m);
  assert.match(text, /^rule\s+drop pings \(rl_\S+\)$/m);
  assert.match(text, /^action\s+dropped$/m);
  assert.match(text, /^reason\s+pings$/m);
  assert.match(text, /^would make\s+nothing$/m);

  const shown = await ok(['webhook', 'test-rules', webhookId, '--payload', payload]);
  assert.match(
    shown,
    /^would make\s+1 todo\n\s+ENDPOINT\s+QUEUE\s+TITLE\n\s+\(the webhook's\)\s+inbox\s+Urgent: T-42$/m,
  );

  const draft = await file('draft.json', { rules: [{ name: 'all', when: 'true', then: { action: 'drop' } }] });
  const drafted = await json(['webhook', 'test-rules', webhookId, '--payload', payload, '--rules', draft]);
  assert.equal(drafted.results[0].action, 'dropped');
  assert.equal(drafted.results[0].rule_name, 'all');

  const none = await ok(['webhook', 'test-rules', webhookId, '--last', '5']);
  assert.equal(none, 'no deliveries to replay: give one with --payload FILE\n');
  const both = await sb(['webhook', 'test-rules', webhookId, '--payload', payload, '--last', '2']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--payload and --last: give one, not both/);
  const lone = await sb(['webhook', 'test-rules', webhookId, '--actor', 'alice']);
  assert.equal(lone.code, 2);
  assert.match(lone.stderr, /--actor: only with --payload/);
  const header = await sb(['webhook', 'test-rules', webhookId, '--payload', payload, '--header', 'nope']);
  assert.equal(header.code, 2);
  assert.match(header.stderr, /--header: "nope" is not NAME=VALUE/);
});

test('trust: on with actors and an expression, off, and a bad expression named by its flag', async () => {
  const on = await json([
    'webhook',
    'trust',
    webhookId,
    '--actor',
    'alice',
    '--actor',
    'bob',
    '--when',
    'event.actor.endsWith("@corp")',
  ]);
  assert.deepEqual(on.trusted_actors, {
    actors: ['alice', 'bob'],
    when: 'event.actor.endsWith("@corp")',
    enforced: true,
  });
  assert.match(
    await ok(['webhook', 'rules', webhookId]),
    /^trust gate: on: actors alice, bob; also trusted when event\.actor/m,
  );
  const off = await ok(['webhook', 'trust', webhookId, '--off']);
  assert.match(off, /: off: every actor's events route\n$/);
  assert.equal((await json(['webhook', 'rules', webhookId])).trusted_actors.enforced, false);
  const bad = await sb(['webhook', 'trust', webhookId, '--actor', 'x', '--when', 'event.actor == ']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^switchboard: --when: .*position/);
  const nothing = await sb(['webhook', 'trust', webhookId]);
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /--actor: give the trusted logins/);
});

test('quarantine: a token delivery from nobody trusted is held, shown, released and discarded', async () => {
  await ok(['webhook', 'rules', webhookId, '--set', await file('rules3.json', RULES)]);
  const none = await json(['webhook', 'trust', webhookId, '--none']);
  assert.deepEqual(none.trusted_actors, { actors: [], when: null, enforced: true });

  const first = await deliver({ title: 'printer on fire', ticket: 'T-1', urgent: true });
  assert.equal(first.answer.disposition, 'quarantined', JSON.stringify(first.answer));
  assert.match(String(first.answer.quarantine_id), /\S/);
  const big = await deliver({ title: 'long', ticket: 'T-2', urgent: true, notes: 'x'.repeat(9000) });
  assert.equal(big.answer.disposition, 'quarantined');
  const dropped = await deliver({ kind: 'ping' });
  assert.equal(dropped.answer.disposition, 'dropped', 'a dropped event is not held');

  const listed = await json(['quarantine', 'list']);
  assert.deepEqual(
    (listed.items as { id: string }[]).map((i) => i.id),
    [big.answer.quarantine_id, first.answer.quarantine_id],
  );
  const table = await ok(['quarantine', 'list']);
  assert.match(table, /^ID\s+HELD SINCE\s+STATE\s+ACTOR\s+REASON\s+WOULD MAKE\s+EVENT$/m);
  assert.match(table, /held\s+-\s+the event names no actor\s+Urgent: T-1/);

  const id = String(first.answer.quarantine_id);
  const shown = await ok(['quarantine', 'show', id]);
  assert.match(shown, /^actor\s+\(none named\)$/m);
  assert.match(shown, /^reason\s+the event names no actor$/m);
  assert.match(
    shown,
    /Would make, if released:\nENDPOINT\s+QUEUE\s+KIND\s+TITLE\n\(the webhook's\)\s+inbox\s+urgent\s+Urgent: T-1\n/,
  );
  assert.match(
    shown,
    /\nPayload:\n\{\n {2}"title": "printer on fire",\n {2}"ticket": "T-1",\n {2}"urgent": true\n\}\n$/,
  );
  const clipped = await ok(['quarantine', 'show', String(big.answer.quarantine_id)]);
  assert.match(clipped, /Payload \(the first \d+ of \d+ characters; --json prints it whole\):/);
  assert.ok(clipped.length < 6000, `clipped: ${clipped.length} characters`);
  const whole = await json(['quarantine', 'show', String(big.answer.quarantine_id)]);
  assert.equal(whole.item.event.payload.notes.length, 9000);

  const released = await json(['quarantine', 'release', id]);
  assert.equal(released.outcome, 'routed');
  assert.equal(released.todos.length, 1);
  const todo = await pool.query<{ title: string; queue: string }>('SELECT title, queue FROM todos WHERE id = $1', [
    released.todos[0].id,
  ]);
  assert.deepEqual(todo.rows[0], { title: 'Urgent: T-1', queue: 'inbox' });
  const twice = await sb(['quarantine', 'release', id]);
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /already released \(conflict\)/);

  const noReason = await sb(['quarantine', 'discard', String(big.answer.quarantine_id)]);
  assert.equal(noReason.code, 2);
  assert.match(noReason.stderr, /--reason/);
  const discarded = await ok(['quarantine', 'discard', String(big.answer.quarantine_id), '--reason', 'spam']);
  assert.match(discarded, /^discarded .*: nothing was made\n$/);
  assert.match(await ok(['quarantine', 'list']), /^no held items\n$/);
  const gone = await json(['quarantine', 'list', '--state', 'discarded']);
  assert.equal(gone.items[0].resolution, 'spam');
  const shownReleased = await ok(['quarantine', 'show', id]);
  assert.match(shownReleased, /^resolved by\s+human:/m);
  const badState = await sb(['quarantine', 'list', '--state', 'nope']);
  assert.equal(badState.code, 2);
  assert.match(badState.stderr, /--state: must be one of held, released, discarded, expired/);
});

test('todo show prints the route of a todo a rule made: the event, the rule by name and position, the steps', async () => {
  await ok(['webhook', 'rules', webhookId, '--set', await file('rules4.json', RULES)]);
  await ok(['webhook', 'trust', webhookId, '--off']);
  const sent = await deliver({ title: 'paper jam', ticket: 'T-9', urgent: true });
  assert.equal(sent.answer.disposition, 'routed', JSON.stringify(sent.answer));
  const made = await pool.query<{ id: string; event_id: string }>('SELECT id, event_id FROM todos WHERE title = $1', [
    'Urgent: T-9',
  ]);
  const todo = made.rows[0];
  assert.ok(todo);

  const shown = await ok(['todo', 'show', todo.id]);
  assert.match(
    shown,
    new RegExp(
      `\\nRoute:\\nevent +${todo.event_id}\\ndisposition +routed\\nrule +urgent tickets \\(rules\\[1\\], rl_\\S+\\)\\n`,
    ),
  );
  assert.match(shown, /^STEP\s+DETAIL$/m);
  assert.match(shown, /^rule\s+rule_id: rl_\S+ · name: urgent tickets · position: 1 · matched: true$/m);
  assert.match(shown, /^decide\s+rule: rl_\S+ · action: route · values: \{.*"title":"Urgent: T-9".*\}$/m);
  assert.match(shown, new RegExp(`^route\\s+rule: rl_\\S+ · endpoint: .* · queue: inbox · todo_id: ${todo.id}$`, 'm'));
  assert.doesNotMatch(shown, /drop pings/, 'only the rule that matched');

  const asJson = await json(['todo', 'show', todo.id]);
  assert.equal(asJson.route.event_id, todo.event_id);
  assert.deepEqual(
    (asJson.route.steps as { step: string }[]).map((s) => s.step),
    ['rule', 'decide', 'route'],
  );

  const plain = await json(['todo', 'push', ep.slug, '--queue', 'inbox', '--title', 'by hand']);
  assert.doesNotMatch(await ok(['todo', 'show', plain.todo.id]), /Route:/, 'no route without an event');
});
