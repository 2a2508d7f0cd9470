// Pins `switchboard todo cancel|retry ENDPOINT --filter …` against a real app: --json
// answers with matched and changed, --dry-run changing nothing, the single-todo forms
// still working, and a bad --filter refused with exit 2 before any request.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { apiHarness, makePeople, push, vend } from '../api/app.js';
import { runCli } from '../helpers/cli.js';
import { listeningApp } from '../helpers/services.js';

const h = await apiHarness('cli_todo_bulk');
const { member } = await makePeople(h);
const { url } = await listeningApp(h.services);
const configHome = await mkdtemp(join(tmpdir(), 'switchboard-bulk-cli-'));
after(() => rm(configHome, { recursive: true, force: true }));
const env = { XDG_CONFIG_HOME: configHome, SWITCHBOARD_URL: url, SWITCHBOARD_TOKEN: member.token };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
async function json(args: string[]): Promise<any> {
  const res = await runCli([...args, '--json'], env);
  assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
  return JSON.parse(res.stdout) as unknown;
}

const stateOf = async (id: string) =>
  (await h.pool.query<{ state: string }>(`SELECT state FROM todos WHERE id = $1`, [id])).rows[0]?.state;

test('todo cancel and retry with --filter act on every matching todo and answer matched and changed', async () => {
  const { endpoint } = await vend(h, member, { queues: ['inbox', 'later'] });
  const inbox = [await push(h, member, endpoint.slug), await push(h, member, endpoint.slug)];
  const later = await push(h, member, endpoint.slug, { queue: 'later' });
  const filters = ['--filter', 'state=pending', '--filter', 'queue=inbox'];
  const dry = await json(['todo', 'cancel', endpoint.slug, ...filters, '--dry-run']);
  assert.deepEqual(dry, { action: 'cancel', dry_run: true, matched: 2, changed: 0 });
  assert.equal(await stateOf(inbox[0]!.id), 'pending');
  const canceled = await json(['todo', 'cancel', endpoint.slug, ...filters]);
  assert.deepEqual(canceled, { action: 'cancel', dry_run: false, matched: 2, changed: 2 });
  assert.equal(await stateOf(later.id), 'pending', 'the other queue is untouched');
  const text = await runCli(['todo', 'retry', endpoint.slug, '--filter', 'queue=inbox'], env);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout.trim(), '2 of 2 matching todo(s) retried');
  for (const t of inbox) assert.equal(await stateOf(t.id), 'pending');
  const one = await json(['todo', 'cancel', later.id]);
  assert.equal(one.todo.state, 'canceled', 'without --filter, cancel still takes a todo id');
});

test('--filter priority_min narrows a bulk cancel to the todos of that priority or higher', async () => {
  const { endpoint } = await vend(h, member, { queues: ['inbox'] });
  const urgent = await push(h, member, endpoint.slug, { priority: 5 });
  const routine = await push(h, member, endpoint.slug);
  const done = await json(['todo', 'cancel', endpoint.slug, '--filter', 'priority_min=1']);
  assert.deepEqual([done.matched, done.changed], [1, 1]);
  assert.equal(await stateOf(urgent.id), 'canceled');
  assert.equal(await stateOf(routine.id), 'pending');
});

test('a bad --filter or a --dry-run without one exits 2 with one line naming the flag', async () => {
  for (const [args, expected] of [
    [['todo', 'cancel', 'ep', '--filter', 'colour=red'], /--filter: "colour=red" is not KEY=VALUE/],
    [['todo', 'cancel', 'ep', '--filter', 'state=lost'], /--filter state: must be one of/],
    [['todo', 'retry', 'ep', '--filter', 'created_before=yesterday'], /--filter created_before: "yesterday"/],
    [['todo', 'cancel', 'ep', '--filter', 'priority_min=high'], /--filter priority_min: "high" is not a whole number/],
    [['todo', 'retry', 'td_x', '--dry-run'], /--dry-run: only with --filter/],
  ] as const) {
    const res = await runCli([...args], env);
    assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
    assert.match(res.stderr, expected);
    assert.equal(res.stderr.trim().split('\n').length, 1);
  }
});
