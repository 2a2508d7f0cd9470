// Pins the `hook` and `presence` commands end to end: the real CLI against a real server
// with auth on (a human API token through SWITCHBOARD_TOKEN); --json parses; a bad flag
// exits 2 with one stderr line naming it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { newId } from '../../src/domain/ids.js';
import { newSecret } from '../../src/identity/secrets.js';
import { startServer } from '../../src/main.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');
const { pool, url } = await testDatabase('hooks_cli');
const parsed = parseConfig({
  SWITCHBOARD_DATABASE_URL: url,
  SWITCHBOARD_LISTEN: '127.0.0.1:0',
  SWITCHBOARD_DB_POOL_SIZE: '4',
});
assert.ok(parsed.ok);
const server = await startServer(parsed.config, pino({ level: 'silent' }));
after(() => server.stop());
const configHome = await mkdtemp(join(tmpdir(), 'sb-hook-cli-'));
after(() => rm(configHome, { recursive: true, force: true }));

const v = await vend(pool);
const { secret, hash } = newSecret('sbt');
await insertApiToken(pool, {
  id: newId('tk'),
  humanId: v.humanId,
  kind: 'human',
  name: 'cli',
  tokenHash: hash,
  expiresAt: null,
});

async function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...env, XDG_CONFIG_HOME: configHome, SWITCHBOARD_URL: server.url, SWITCHBOARD_TOKEN: secret },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

async function json(...args: string[]): Promise<Record<string, unknown>> {
  const r = await cli(...args, '--json');
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

test('hook create, list, rotate and delete drive the endpoint’s notify hooks', async () => {
  const slug = v.endpoint.slug;
  const created = await json('hook', 'create', slug, 'https://93.184.216.34/hook', '--queue', 'inbox');
  assert.match(String(created.signing_secret), /^whsec_/);
  const id = String(created.hook_id);
  const listed = await json('hook', 'list', slug);
  assert.equal(listed.used, 1);
  const human = await cli('hook', 'list', slug);
  assert.match(human.stdout, /1 of 5 used/);
  const rotated = await json('hook', 'rotate', slug, id);
  assert.notEqual(rotated.signing_secret, created.signing_secret);
  const immediate = await cli('hook', 'rotate', slug, id, '--immediate');
  assert.equal(immediate.code, 0, immediate.stderr);
  assert.match(immediate.stdout, /the old one no longer signs/);
  assert.match(immediate.stdout, /whsec_/);
  assert.deepEqual(await json('hook', 'delete', slug, id), { hook_id: id, deleted: true });
  const refused = await cli('hook', 'create', slug, 'https://127.0.0.1/hook');
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /url/);
});

test('presence out, show, shift and clear steer the endpoint; bad flags name themselves', async () => {
  const slug = v.endpoint.slug;
  const out = await json('presence', 'out', slug, '--until', '2099-01-01T00:00:00Z');
  assert.equal(out.presence, 'out');
  assert.equal(out.source, 'operator');
  assert.equal((await json('presence', 'show', slug)).until, '2099-01-01T00:00:00.000Z');
  assert.equal((await json('presence', 'clear', slug)).presence, 'in');
  const shifted = await json('presence', 'shift', slug, 'TZ=UTC; 00:00-24:00');
  assert.equal(shifted.source, 'shift');
  assert.equal((await json('presence', 'shift', slug, '--clear')).shift, null);
  const badUntil = await cli('presence', 'in', slug, '--until', 'yesterday');
  assert.equal(badUntil.code, 2);
  assert.match(badUntil.stderr, /--until/);
  assert.equal(badUntil.stderr.trim().split('\n').length, 1);
  const both = await cli('presence', 'shift', slug, '09:00-17:00', '--clear');
  assert.equal(both.code, 2);
});
