// Pins `switchboard todo push ENDPOINT --file` end to end: the compiled CLI against a real
// server, reading JSON lines from a file or stdin, sending batches of up to 1,000 through
// the bulk create, and a bad line naming its line number and field with nothing of its
// batch written.

import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { endpointOf, owner, server } from '../doorbell/world.js';

const { pool, url } = await testDatabase('todo_push');
const s = await server(url, 'todo-push');
const me = await owner(pool);
const dir = await mkdtemp(join(tmpdir(), 'switchboard-push-'));

function push(args: string[], input = '') {
  return runCli(
    ['todo', 'push', ...args, '--url', s.url],
    { XDG_CONFIG_HOME: dir, SWITCHBOARD_TOKEN: me.token },
    input,
  );
}

async function titles(endpointId: string): Promise<string[]> {
  const res = await pool.query<{ title: string }>('SELECT title FROM todos WHERE endpoint_id = $1 ORDER BY id', [
    endpointId,
  ]);
  return res.rows.map((r) => r.title);
}

const lines = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ title: `todo ${from + i}`, idempotency_key: `k${from + i}` }));

test('push --file sends 2,500 lines in three batches and --json prints the summary', async () => {
  const ep = await endpointOf(pool, me.humanId, 'file');
  const file = join(dir, 'todos.jsonl');
  await writeFile(file, lines(2500).join('\n') + '\n\n');
  const run = await push([ep.slug, '--file', file, '--json']);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { created: 2500, duplicates: 0, batches: 3 });
  assert.equal(run.stderr, '', 'no progress drawn when stderr is not a terminal');
  const stored = await titles(ep.id);
  assert.equal(stored.length, 2500);
  assert.equal(stored[0], 'todo 0');
  assert.equal(stored[2499], 'todo 2499');

  const again = await push([ep.slug, '--file', file]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /pushed 0 todos .* in 3 batches \(2500 duplicates/);
});

test('push --file - reads stdin; a line without a queue goes to --queue', async () => {
  const ep = await endpointOf(pool, me.humanId, 'stdin');
  const input = [JSON.stringify({ title: 'from stdin' }), JSON.stringify({ title: 'second', payload: { n: 2 } })];
  const run = await push([ep.slug, '--file', '-', '--json', '--queue', 'inbox'], input.join('\n'));
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { created: 2, duplicates: 0, batches: 1 });
  assert.deepEqual(await titles(ep.id), ['from stdin', 'second']);
  const text = await push([ep.slug, '--file', '-', '--queue', 'inbox'], JSON.stringify({ title: 'one more' }));
  assert.equal(text.stdout, `pushed 1 todo to ${ep.slug} in 1 batch (0 duplicates answered by existing todos)\n`);
});

test('a bad line names its line number and field, and nothing of its batch is written', async () => {
  const ep = await endpointOf(pool, me.humanId, 'bad');
  const all = lines(1500);
  all[1200] = JSON.stringify({ title: 'bad attempts', max_attempts: 0 });
  const run = await push([ep.slug, '--file', '-'], all.join('\n'));
  assert.equal(run.code, 2, run.stderr);
  assert.match(
    run.stderr,
    /^switchboard: line 1201: max_attempts: .*batch 2 \(lines 1001–1500\) wrote nothing; 1 earlier batch wrote 1000 todos\n$/,
  );
  assert.equal((await titles(ep.id)).length, 1000);
});

test('a line that is not a JSON object stops the push before its batch is sent', async () => {
  const ep = await endpointOf(pool, me.humanId, 'notjson');
  const run = await push([ep.slug, '--file', '-'], [JSON.stringify({ title: 'ok' }), '{oops'].join('\n'));
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^switchboard: line 2: not valid JSON .*; lines 1–2 were not sent; nothing was written\n$/);
  assert.deepEqual(await titles(ep.id), []);
  // After a batch went: what it wrote stays, and the message says so.
  const later = await push([ep.slug, '--file', '-'], [...lines(1001), '[1]'].join('\n'));
  assert.equal(later.code, 2);
  assert.match(
    later.stderr,
    /^switchboard: line 1002: must be a JSON object.*; lines 1001–1002 were not sent; 1 earlier batch wrote 1000 todos\n$/,
  );
  assert.equal((await titles(ep.id)).length, 1000);
  const flags = await push([ep.slug, '--file', '-', '--title', 'x']);
  assert.equal(flags.code, 2);
  assert.match(flags.stderr, /--title: not with --file/);
});
