// Pins `switchboard human list|add|disable|enable|role|reset|unlink-oidc|delete|audit` end to end: the real
// command as its own process against a real server on 127.0.0.1, signed in as an admin
// with an API token; every --json answer parses, a human is named by id or email, a bad
// role exits 2 naming it, the last admin is refused with exit 1; and `whoami` shows the
// token's expiry, while an expired login says to run `switchboard login` again.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { newSecret } from '../../src/identity/secrets.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { insertHuman } from '../../src/store/humans.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { startApp } from '../mcp/harness.js';

const { pool } = await testDatabase('cli_human');
const { url } = await startApp(pool, 'instance-cli-human');
const admin = await insertHuman(pool, {
  id: newId('hu'),
  email: 'root@example.test',
  displayName: 'Root',
  role: 'admin',
});

async function tokenFor(humanId: string, kind: 'human' | 'workflow' = 'human', expiresAt: Date | null = null) {
  const { secret, hash } = newSecret('sbt');
  await insertApiToken(pool, { id: newId('tk'), humanId, kind, name: 'cli test', tokenHash: hash, expiresAt });
  return secret;
}
const adminToken = await tokenFor(admin.id);

function sb(args: string[], token = adminToken): Promise<CliRun> {
  return runCli([...args, '--url', url], { SWITCHBOARD_TOKEN: token, XDG_CONFIG_HOME: '/nonexistent' });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
async function json(args: string[]): Promise<any> {
  const r = await sb([...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('add invites, list shows role and state, role/disable/enable change them by email or id, reset prints a link', async () => {
  const added = await json(['human', 'add', 'Bea@Example.test', '--name', 'Bea', '--role', 'member']);
  assert.equal(added.human.email, 'bea@example.test');
  assert.match(added.invite_url, /\/setup\/sbs_/);
  const plain = await sb(['human', 'add', 'cy@example.test']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /invited cy@example\.test \(member, hu_/);

  const listed = await json(['human', 'list']);
  assert.deepEqual(
    (listed.humans as { email: string; state: string }[]).map((h) => [h.email, h.state]),
    [
      ['root@example.test', 'active'],
      ['bea@example.test', 'active'],
      ['cy@example.test', 'active'],
    ],
  );
  const table = await sb(['human', 'list']);
  assert.match(table.stdout, /^ID\s+EMAIL\s+NAME\s+ROLE\s+STATE\s+CREATED/m);

  const promoted = await json(['human', 'role', 'bea@example.test', 'admin']);
  assert.equal(promoted.human.role, 'admin');
  const disabled = await json(['human', 'disable', added.human.id]);
  assert.equal(disabled.human.state, 'disabled');
  assert.deepEqual(Object.keys(disabled.ended).sort(), ['board_sessions_ended', 'sessions_closed', 'tokens_revoked']);
  const enabled = await sb(['human', 'enable', 'bea@example.test']);
  assert.equal(enabled.code, 0, enabled.stderr);
  assert.match(enabled.stdout, /bea@example\.test is active: they can sign in again/);

  const reset = await json(['human', 'reset', 'cy@example.test']);
  assert.match(reset.reset_url, /\/setup\/sbs_/);
  assert.ok(Date.parse(reset.expires_at) > Date.now());
  const resetText = await sb(['human', 'reset', 'cy@example.test']);
  assert.match(resetText.stdout, /reset link\s+http/);
  assert.doesNotMatch(resetText.stdout, /credentials replaced/, 'a plain reset replaces nothing');
  // For a compromised account: cy has no endpoint or grant, so both counts are 0 — and said.
  const compromised = await sb(['human', 'reset', 'cy@example.test', '--revoke-grants', '--rotate-credentials']);
  assert.equal(compromised.code, 0, compromised.stderr);
  assert.match(compromised.stdout, /grants revoked\s+0 \(0 sessions closed\)/);
  assert.match(compromised.stdout, /credentials replaced\s+0; the owner runs 'switchboard endpoint rotate'/);

  // The audit of what was just done to bea, newest first, by whom; a page and its follow-up.
  const audit = await json(['human', 'audit', 'bea@example.test']);
  assert.deepEqual(
    (audit.entries as { action: string }[]).slice(0, 3).map((e) => e.action),
    ['enable', 'disable', 'role'],
  );
  assert.equal(audit.entries[0].actor_email, 'root@example.test');
  const page = await sb(['human', 'audit', added.human.id, '--limit', '1']);
  assert.equal(page.code, 0, page.stderr);
  assert.match(page.stdout, /^ID\s+AT\s+ACTION\s+BY\s+DETAIL/m);
  assert.match(page.stdout, /enable\s+root@example\.test/);
  const more = /more: switchboard human audit \S+ --before (\d+)/.exec(page.stdout);
  assert.ok(more, page.stdout);
  const next = await json(['human', 'audit', added.human.id, '--limit', '1', '--before', more[1] ?? '']);
  assert.equal(next.entries[0].action, 'disable');
  const bad = await sb(['human', 'audit', 'bea@example.test', '--limit', '0']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--limit/);
});

test('delete removes a human, transferring endpoints when asked; bad input and the last admin are refused', async () => {
  const dee = await json(['human', 'add', 'dee@example.test']);
  const eve = await json(['human', 'add', 'eve@example.test']);
  const moved = await json(['human', 'delete', 'dee@example.test', '--transfer-endpoints-to', 'eve@example.test']);
  assert.deepEqual(moved, { deleted: true, endpoints_transferred: 0 });
  const removed = await sb(['human', 'delete', eve.human.id]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /deleted hu_\w+; 0 endpoint\(s\) revoked and removed/);
  const after = (await json(['human', 'list'])) as { humans: { id: string }[] };
  assert.equal(
    after.humans.some((h) => h.id === dee.human.id),
    false,
  );

  const badRole = await sb(['human', 'role', 'root@example.test', 'owner']);
  assert.equal(badRole.code, 2);
  assert.match(badRole.stderr, /<ROLE>: must be one of admin, member/);
  const unknown = await sb(['human', 'disable', 'nobody@example.test']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no human with email nobody@example\.test/);

  // Bea (made an admin above) steps down; root is then the last active admin.
  await json(['human', 'role', 'bea@example.test', 'member']);
  const last = await sb(['human', 'disable', 'root@example.test']);
  assert.equal(last.code, 1);
  assert.match(last.stderr, /last active admin.*failed_precondition/);
});

test('whoami shows when the token expires; an expired login says to run switchboard login again', async () => {
  const member = await insertHuman(pool, {
    id: newId('hu'),
    email: 'fay@example.test',
    displayName: 'Fay',
    role: 'member',
  });
  const live = await tokenFor(member.id);
  const who = await runCli(['whoami', '--url', url], { SWITCHBOARD_TOKEN: live, XDG_CONFIG_HOME: '/nonexistent' });
  assert.equal(who.code, 0, who.stderr);
  assert.match(who.stdout, /expires\s+\d{4}-\d\d-\d\dT.*each use extends it/);
  const whoJson = await runCli(['whoami', '--json', '--url', url], {
    SWITCHBOARD_TOKEN: live,
    XDG_CONFIG_HOME: '/nonexistent',
  });
  assert.ok(Date.parse(JSON.parse(whoJson.stdout).token.expires_at) > Date.now());

  const expired = await tokenFor(member.id, 'human', new Date(Date.now() - 1_000));
  const refused = await runCli(['whoami', '--url', url], {
    SWITCHBOARD_TOKEN: expired,
    XDG_CONFIG_HOME: '/nonexistent',
  });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /your login expired .*run `switchboard login --url http:\/\/127\.0\.0\.1:\d+` again/);

  const member403 = await sb(['human', 'list'], live);
  assert.equal(member403.code, 1);
  assert.match(member403.stderr, /this needs an admin \(forbidden\)/);
});

test('unlink-oidc removes a human’s provider link, audited; a human with none is refused with exit 1', async () => {
  const gus = await json(['human', 'add', 'gus@example.test']);
  await pool.query(`UPDATE humans SET oidc_issuer = 'https://idp.example.test', oidc_subject = 'gus-1' WHERE id = $1`, [
    gus.human.id,
  ]);
  const unlinked = await json(['human', 'unlink-oidc', 'gus@example.test']);
  assert.deepEqual(unlinked.unlinked, { issuer: 'https://idp.example.test', subject: 'gus-1' });
  const row = await pool.query('SELECT oidc_issuer, oidc_subject FROM humans WHERE id = $1', [gus.human.id]);
  assert.deepEqual(row.rows[0], { oidc_issuer: null, oidc_subject: null });
  const audit = await json(['human', 'audit', gus.human.id]);
  assert.equal(audit.entries[0].action, 'oidc_unlink');
  assert.deepEqual(audit.entries[0].detail, { issuer: 'https://idp.example.test', subject: 'gus-1' });

  const again = await sb(['human', 'unlink-oidc', gus.human.id]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /gus@example\.test is not linked to a provider account/);
  const text = await sb(['human', 'unlink-oidc', 'nobody@example.test']);
  assert.equal(text.code, 1);
  assert.match(text.stderr, /no human with email nobody@example\.test/);
});
