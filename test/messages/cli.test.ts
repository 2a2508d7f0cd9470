// Pins the message queue commands end to end: `switchboard message send|list|remove|clear`
// and `switchboard settings message-queue [show|set N]` run as processes against a real
// app, with --json answers, the refusals an admin-only or locked write gets, and exit codes.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { makePeople, vend } from '../api/app.js';
import { testDatabase } from '../helpers/db.js';
import { instance, listening } from './api.js';
import { session, stored } from './world.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');
const { pool, url } = await testDatabase('messages_cli');
const h = await instance(pool, url);
const people = await makePeople(h);
const base = await listening(h);
const configHome = await mkdtemp(join(tmpdir(), 'switchboard-message-cli-'));
after(() => rm(configHome, { recursive: true, force: true }));

async function sb(token: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...env, XDG_CONFIG_HOME: configHome, SWITCHBOARD_URL: base, SWITCHBOARD_TOKEN: token },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
async function json(token: string, args: string[]): Promise<any> {
  const res = await sb(token, [...args, '--json']);
  assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
  return JSON.parse(res.stdout) as unknown;
}

test('message send, list, remove and clear work on a session of the signed-in human', async () => {
  const { endpoint } = await vend(h, people.member);
  const sessionId = await session(pool, endpoint.id);
  const token = people.member.token;
  const first = await json(token, ['message', 'send', sessionId, 'hello agent']);
  assert.equal(first.queued_by, 'user');
  await json(token, ['message', 'send', sessionId, 'second']);
  const listed = await json(token, ['message', 'list', sessionId]);
  assert.deepEqual(
    (listed.entries as { content: string }[]).map((e) => e.content),
    ['hello agent', 'second'],
  );
  const text = await sb(token, ['message', 'list', sessionId]);
  assert.match(text.stdout, /hello agent/);
  assert.match(text.stdout, /2 pending, capacity 10/);
  assert.deepEqual(await json(token, ['message', 'remove', sessionId, first.id]), { entry_id: first.id });
  assert.equal((await json(token, ['message', 'clear', sessionId])).removed, 1);
  assert.equal((await stored(pool, sessionId)).length, 0);
  const foreign = await sb(people.other.token, ['message', 'send', sessionId, 'x']);
  assert.equal(foreign.code, 1);
  assert.match(foreign.stderr, /^switchboard: Session not found \(not_found\)\n$/);
  const empty = await sb(token, ['message', 'send', sessionId, '  ']);
  assert.equal(empty.code, 2);
});

test('settings message-queue shows to anyone signed in and sets for admins only', async () => {
  const shown = await json(people.member.token, ['settings', 'message-queue', 'show']);
  assert.equal(shown.effective.source, 'default');
  const bare = await sb(people.member.token, ['settings', 'message-queue']);
  assert.equal(bare.code, 0);
  assert.match(bare.stdout, /effective\s+10/);
  const refused = await sb(people.member.token, ['settings', 'message-queue', 'set', '5']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /forbidden/);
  const set = await json(people.admin.token, ['settings', 'message-queue', 'set', '0']);
  assert.deepEqual([set.effective.max_per_session, set.effective.source], [0, 'setting']);
  const text = await sb(people.admin.token, ['settings', 'message-queue', 'show']);
  assert.match(text.stdout, /0 \(unlimited\)/);
  const bad = await sb(people.admin.token, ['settings', 'message-queue', 'set', '-1']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /N: must be a whole number/);
});
