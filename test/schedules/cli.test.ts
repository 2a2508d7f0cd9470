// Pins `switchboard schedule list|show|add|pause|resume|remove` end to end: the compiled
// command as its own process against a real server on 127.0.0.1, signed in with an API
// token; every --json answer parses, a bad flag exits 2 with one line naming it (the
// server's cron and zone checks included), a foreign endpoint exits 1 with not_found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addBody } from '../../src/cli/schedule.js';
import { newId } from '../../src/domain/ids.js';
import { newSecret } from '../../src/identity/secrets.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { runCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { startApp, vend } from '../mcp/harness.js';

const { pool } = await testDatabase('schedule_cli');
const { url } = await startApp(pool, 'instance-schedule-cli');
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

const sb = (args: string[]) => runCli([...args, '--url', url], { SWITCHBOARD_TOKEN: secret });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
async function json(args: string[]): Promise<any> {
  const r = await sb([...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('add, list, pause, resume, show and remove a schedule through the CLI', async () => {
  const slug = mine.endpoint.slug;
  const added = await json([
    'schedule',
    'add',
    slug,
    '--cron',
    '0 9 * * 1-5',
    '--tz',
    'Europe/Berlin',
    '--queue',
    'batch',
    '--title',
    'morning report',
    '--payload',
    '{"team":"a"}',
  ]);
  const id = added.schedule.id as string;
  assert.match(id, /^sc_/);
  assert.equal(added.schedule.cron, '0 9 * * 1-5');
  assert.ok(added.schedule.next_run_at);
  const listed = await json(['schedule', 'list', slug]);
  assert.deepEqual(
    (listed.schedules as Array<{ id: string }>).map((s) => s.id),
    [id],
  );
  const text = await sb(['schedule', 'list', slug]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /ID\s+QUEUE\s+CRON\s+ZONE\s+STATE\s+NEXT RUN\s+TITLE/);
  assert.match(text.stdout, new RegExp(`${id}\\s+batch\\s+0 9 \\* \\* 1-5\\s+Europe/Berlin\\s+active`));
  const paused = await json(['schedule', 'pause', slug, id]);
  assert.equal(paused.schedule.paused, true);
  assert.equal(paused.schedule.next_run_at, null);
  const resumed = await sb(['schedule', 'resume', slug, id]);
  assert.equal(resumed.code, 0, resumed.stderr);
  // Run times read on the schedule's own wall clock (09:00 in Berlin), then in UTC.
  assert.match(
    resumed.stdout,
    new RegExp(
      `resumed ${id}: next run \\d+ \\w+ \\d{4}, 09:00 Europe/Berlin \\(\\d{4}-\\d\\d-\\d\\dT0[78]:00:00Z\\)\\n$`,
    ),
  );
  const shown = await sb(['schedule', 'show', slug, id]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /cron\s+0 9 \* \* 1-5 \(Europe\/Berlin\)/);
  assert.match(shown.stdout, /Audit:\n.*ACTION[\s\S]*resume[\s\S]*pause[\s\S]*create/);
  // The audit names people by email, not by id.
  const email = (await pool.query<{ email: string }>('SELECT email FROM humans WHERE id = $1', [mine.humanId])).rows[0]!
    .email;
  assert.match(shown.stdout, /AT\s+ACTION\s+BY\s+CHANGES/);
  assert.equal(shown.stdout.split(email).length - 1, 3, shown.stdout);
  assert.ok(!shown.stdout.includes(mine.humanId), shown.stdout);
  const removed = await json(['schedule', 'remove', slug, id]);
  assert.deepEqual(removed, { id, deleted: true });
  const gone = await sb(['schedule', 'show', slug, id]);
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /not_found/);
});

test('bad flags exit 2 naming the flag, and a foreign endpoint is not_found', async () => {
  const slug = mine.endpoint.slug;
  const cases: Array<[string[], RegExp]> = [
    [['--cron', '0 9 * *', '--title', 't'], /--cron: must be five fields/],
    [['--cron', '0 9 * * *', '--title', 't', '--priority', '500'], /--priority: must be a whole number/],
    [['--cron', '0 9 * * *', '--title', 't', '--payload', '{'], /--payload: not valid JSON/],
    [['--cron', '0 9 * * *', '--title', 't', '--queue', 'Bad Queue'], /--queue/],
    // The server's refusals name the flag the field came from.
    [['--cron', '0 99 * * *', '--title', 't', '--tz', 'UTC'], /^switchboard: --cron: /],
    [
      ['--cron', '0 9 * * *', '--title', 't', '--tz', 'Mars/Olympus'],
      /^switchboard: --tz: "Mars\/Olympus" is not an IANA zone this server knows, such as Europe\/Berlin or UTC/,
    ],
    [['--cron', '0 9 * * *', '--title', 't', '--tz', 'UTC', '--queue', 'elsewhere'], /^switchboard: --queue: /],
  ];
  for (const [flags, message] of cases) {
    const r = await sb(['schedule', 'add', slug, ...flags]);
    assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
  for (const command of [
    ['add', theirs.endpoint.slug, '--cron', '0 9 * * *', '--title', 't', '--tz', 'UTC'],
    ['list', theirs.endpoint.slug],
    ['pause', theirs.endpoint.slug, 'sc_01J00000000000000000000000'],
  ]) {
    const foreign = await sb(['schedule', ...command]);
    assert.equal(foreign.code, 1, command.join(' '));
    assert.match(foreign.stderr, /not found \(not_found\)/);
  }
  const rows = await pool.query(`SELECT count(*)::int AS n FROM schedules`);
  assert.equal(rows.rows[0].n, 0);
});

test("the machine's zone is the default, and only the flags given are sent", () => {
  assert.deepEqual(addBody({ cron: ' 0 9 * * * ', title: 'standup', queue: 'inbox' }, 'Asia/Kathmandu'), {
    queue: 'inbox',
    cron: '0 9 * * *',
    tz: 'Asia/Kathmandu',
    title: 'standup',
  });
  assert.deepEqual(
    addBody({ cron: '0 9 * * *', title: 't', queue: 'inbox', tz: 'UTC', priority: '-5', kind: 'k', paused: true }),
    { queue: 'inbox', cron: '0 9 * * *', tz: 'UTC', title: 't', priority: -5, kind: 'k', paused: true },
  );
});
