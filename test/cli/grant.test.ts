// Pins `switchboard grant request|approve|deny|list|revoke` end to end: the compiled CLI
// against a real server. Within one owner a request is granted at once; across owners it
// is requested, the other owner approves or denies it, either revokes it; `list` shows both
// directions; --json prints the answer; a bad flag is a usage error naming it; the target's
// owner alone decides (the requester's approve exits non-zero with the server's message).

import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, type CliRun } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { endpointOf, owner, server } from '../doorbell/world.js';

const { pool, url } = await testDatabase('cli_grant');
const s = await server(url, 'cli-grant');
const alice = await owner(pool);
const bob = await owner(pool);
const dir = await mkdtemp(join(tmpdir(), 'switchboard-grant-'));
const planner = await endpointOf(pool, alice.humanId, 'planner');
const coder = await endpointOf(pool, alice.humanId, 'coder');
const reviewer = await endpointOf(pool, bob.humanId, 'reviewer');

function sb(token: string, args: string[]): Promise<CliRun> {
  return runCli([...args, '--url', s.url], { XDG_CONFIG_HOME: dir, SWITCHBOARD_TOKEN: token });
}

async function ok(token: string, args: string[]): Promise<string> {
  const r = await sb(token, args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
async function json(token: string, args: string[]): Promise<any> {
  return JSON.parse(await ok(token, [...args, '--json']));
}

test('within one owner a grant is active at once; across owners it is requested, then approved, and revoked', async () => {
  const mine = await ok(alice.token, ['grant', 'request', planner.slug, coder.slug, '--queue', 'inbox']);
  assert.match(mine, new RegExp(`^granted gr_\\w+: ${planner.slug} → ${coder.slug} \\[inbox\\] is active\\n$`));

  const asked = await json(alice.token, [
    'grant',
    'request',
    coder.slug,
    reviewer.slug,
    '--queue',
    'inbox',
    '--rate',
    '30',
  ]);
  assert.equal(asked.grant.state, 'requested');
  assert.equal(asked.grant.rate_per_hour, 30);
  const id = asked.grant.id as string;

  const refused = await sb(alice.token, ['grant', 'approve', id]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, new RegExp(`only the owner of ${reviewer.slug} may approve`));

  const listed = await ok(bob.token, ['grant', 'list']);
  assert.match(listed, new RegExp(`${id}\\s+${coder.slug}\\s+${reviewer.slug}\\s+inbox\\s+requested`));
  assert.match(await ok(bob.token, ['grant', 'approve', id]), new RegExp(`^approved ${id}: .* is active\\n$`));
  const both = await json(alice.token, ['grant', 'list']);
  assert.deepEqual((both.grants as { id: string; state: string }[]).map((g) => g.state).sort(), ['active', 'active']);
  assert.match(await ok(alice.token, ['grant', 'revoke', id]), new RegExp(`^revoked ${id}: .* is revoked\\n$`));
});

test('deny leaves the grant denied; bad flags are usage errors naming them', async () => {
  const asked = await json(alice.token, ['grant', 'request', planner.slug, reviewer.slug, '--queue', 'inbox']);
  const denied = await json(bob.token, ['grant', 'deny', asked.grant.id]);
  assert.equal(denied.grant.state, 'denied');
  const bad = await sb(alice.token, [
    'grant',
    'request',
    planner.slug,
    reviewer.slug,
    '--queue',
    'inbox',
    '--rate',
    '0',
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--rate/);
  const missing = await sb(alice.token, ['grant', 'request', planner.slug, reviewer.slug]);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /--queue/);
});
