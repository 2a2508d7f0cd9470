// Pins `switchboard queue budget show|set|clear` end to end: the real command as its own
// process against a real server on 127.0.0.1, signed in with an API token; every --json
// answer parses, a refused flag exits 2 with one stderr line naming it, a foreign
// endpoint exits 1 with not_found.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { budgetBody } from '../../src/cli/queue.js';
import { newId } from '../../src/domain/ids.js';
import { newSecret } from '../../src/identity/secrets.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { testDatabase } from '../helpers/db.js';
import { startApp, vend } from '../mcp/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');

const { pool } = await testDatabase('admission_cli');
const { url } = await startApp(pool, 'instance-admission-cli');
const mine = await vend(pool, { queues: ['inbox', 'batch'] });
const theirs = await vend(pool);
const { secret, hash } = newSecret('sbt');
await insertApiToken(pool, {
  id: newId('tk'),
  humanId: mine.humanId,
  kind: 'human',
  name: 'cli test',
  tokenHash: hash,
  expiresAt: null,
});

async function sb(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  const child = spawn(process.execPath, [BIN, ...args, '--url', url], {
    cwd: ROOT,
    env: { ...env, SWITCHBOARD_TOKEN: secret, XDG_CONFIG_HOME: '/nonexistent' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
async function json(args: string[]): Promise<any> {
  const r = await sb([...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('set, show and clear a budget round trip through the CLI', async () => {
  const slug = mine.endpoint.slug;
  const set = await json([
    'queue',
    'budget',
    'set',
    slug,
    'inbox',
    '--per-week',
    '70',
    '--tz',
    'Europe/London',
    '--start',
    '08:30',
    '--weekday',
    'Tue',
    '--max-in-flight',
    '3',
  ]);
  assert.equal(set.created, true);
  assert.deepEqual(set.policy.window, { period: 'week', tz: 'Europe/London', start: '08:30', weekday: 'Tue' });
  assert.equal(set.policy.max_in_flight, 3);
  const replaced = await json(['queue', 'budget', 'set', slug, 'inbox', '--per-hour', '5', '--tz', 'UTC']);
  assert.equal(replaced.created, false);
  assert.equal(replaced.policy.max_in_flight, null, 'set is a full replace');
  const one = await json(['queue', 'budget', 'show', slug, 'inbox']);
  assert.deepEqual(
    (one.audit as Array<{ action: string }>).map((a) => a.action),
    ['update', 'create'],
  );
  const all = await json(['queue', 'budget', 'show']);
  assert.deepEqual(
    (all.policies as Array<{ queue: string }>).map((p) => p.queue),
    ['inbox'],
  );
  const text = await sb(['queue', 'budget', 'show', slug]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /SCOPE\s+QUEUE\s+STATE/);
  assert.match(text.stdout, new RegExp(`endpoint:${slug}\\s+inbox\\s+admissible\\s+0/5`));
  const detail = await sb(['queue', 'budget', 'show', slug, 'inbox']);
  assert.match(detail.stdout, /window\s+hour from 00:00 UTC/);
  assert.match(detail.stdout, /Audit:/);
  // The audit names people by email, not by id.
  const email = (await pool.query<{ email: string }>('SELECT email FROM humans WHERE id = $1', [mine.humanId])).rows[0]!
    .email;
  assert.match(detail.stdout, new RegExp(`BY[\\s\\S]*${email.replace(/[.]/g, '\\.')}`));
  assert.ok(!detail.stdout.includes(mine.humanId), detail.stdout);
  const cleared = await json(['queue', 'budget', 'clear', slug, 'inbox']);
  assert.deepEqual(cleared, { scope: `endpoint:${slug}`, queue: 'inbox', deleted: true });
  const gone = await sb(['queue', 'budget', 'show', slug, 'inbox']);
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /not_found/);
});

test('bad flags exit 2 naming the flag, and a foreign endpoint is not_found', async () => {
  const slug = mine.endpoint.slug;
  const cases: Array<[string[], RegExp]> = [
    [['--per-day', '5', '--per-hour', '2'], /--per-day and --per-hour/],
    [['--per-day', 'many'], /--per-day: must be a whole number/],
    [['--max-in-flight', '-1'], /--max-in-flight/],
    [['--per-day', '5', '--start', '25:00'], /--start/],
    [['--per-day', '5', '--weekday', 'Mon'], /--weekday: only with --per-week/],
    [['--per-week', '5', '--weekday', 'Someday'], /--weekday: must be one of/],
    [['--tz', 'UTC'], /a budget needs a limit/],
    [
      ['--per-day', '5', '--tz', 'Mars/Olympus'],
      /^switchboard: --tz: "Mars\/Olympus" is not an IANA zone this server knows, such as Europe\/Berlin or UTC/,
    ],
  ];
  for (const [flags, message] of cases) {
    const r = await sb(['queue', 'budget', 'set', slug, 'batch', ...flags]);
    assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
  for (const command of [
    ['set', theirs.endpoint.slug, 'inbox', '--max-in-flight', '1'],
    ['show', theirs.endpoint.slug],
    ['show', theirs.endpoint.slug, 'inbox'],
    ['clear', theirs.endpoint.slug, 'inbox'],
  ]) {
    const foreign = await sb(['queue', 'budget', ...command]);
    assert.equal(foreign.code, 1, command.join(' '));
    assert.match(foreign.stderr, /not found \(not_found\)/);
  }
  const rows = await pool.query(`SELECT count(*)::int AS n FROM admission_policies`);
  assert.equal(rows.rows[0].n, 0);
});

test('the local zone is the default, and a week starts on Monday unless told', () => {
  assert.deepEqual(budgetBody({ perWeek: '10' }, 'Asia/Kathmandu'), {
    max_in_flight: null,
    max_claims_per_window: 10,
    window: { period: 'week', tz: 'Asia/Kathmandu', start: '00:00', weekday: 'Mon' },
  });
  assert.deepEqual(budgetBody({ maxInFlight: '0' }), { max_in_flight: 0, max_claims_per_window: null, window: null });
});
