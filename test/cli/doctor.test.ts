// Pins `switchboard doctor` end to end: the real CLI as its own process against a real
// server, signed in with a human API token (never an endpoint credential). Without an
// endpoint it checks and lists; with one it runs the live self-test: exit 0 and `pass`
// with a listening client, exit 1 with the verdict and hints without one.

import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WITHOUT_SESSION } from '../../src/domain/guidance.js';
import { testDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/cli.js';
import { agent, endpointOf, owner, server } from '../doorbell/world.js';

const { pool, url } = await testDatabase('doctor');
const s = await server(url, 'doctor');
const me = await owner(pool);
const configHome = await mkdtemp(join(tmpdir(), 'switchboard-doctor-'));

/** The CLI as a person runs it; stdin is closed at once, so a prompt would fail the run. */
function doctor(args: string[], token: string | null = me.token) {
  return runCli(['doctor', ...args, '--url', s.url], {
    XDG_CONFIG_HOME: configHome,
    ...(token ? { SWITCHBOARD_TOKEN: token } : {}),
  });
}

test('doctor without an endpoint checks the server and sign-in and lists endpoints with their sessions', async () => {
  const ep = await endpointOf(pool, me.humanId, 'listed');
  const a = await agent(pool, s.url, ep.credential, { name: 'claude-code' });
  const { code, stdout, stderr } = await doctor(['--json']);
  assert.equal(code, 0, stderr);
  const answer = JSON.parse(stdout) as {
    ok: boolean;
    checks: Array<{ name: string; ok: boolean }>;
    endpoints: Array<{ slug: string; sessions: Array<{ id: string }> }>;
  };
  assert.equal(answer.ok, true);
  assert.deepEqual(
    answer.checks.map((c) => [c.name, c.ok]),
    [
      ['reachable', true],
      ['healthz', true],
      ['version', true],
      ['credentials', true],
    ],
  );
  const listed = answer.endpoints.find((e) => e.slug === ep.slug);
  assert.deepEqual(
    listed?.sessions.map((x) => x.id),
    [a.sessionId],
  );
  const text = await doctor([]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /doctor: all good/);
  assert.match(text.stdout, new RegExp(`endpoint ${ep.slug}`));
});

test('doctor ENDPOINT with a listening client passes and exits 0', async () => {
  const ep = await endpointOf(pool, me.humanId, 'listening');
  await agent(pool, s.url, ep.credential, { name: 'claude-code', claimOnRing: true });
  const { code, stdout, stderr } = await doctor([ep.slug, '--wait', '30s', '--json']);
  assert.equal(code, 0, stderr);
  const answer = JSON.parse(stdout) as {
    ok: boolean;
    doorbell_test: { verdict: string; claimed_within_seconds: number };
  };
  assert.equal(answer.doorbell_test.verdict, 'pass');
  assert.equal(typeof answer.doorbell_test.claimed_within_seconds, 'number');
  const text = await doctor([ep.slug, '--wait', '30s']);
  assert.equal(text.code, 0, 'a second test may start once the first is over');
  assert.match(text.stderr, /doorbell self-test dt_\w+ started: .* waiting up to 30 s/, 'progress without a terminal');
  assert.match(text.stdout, /PASS: delivered and heard/);
  assert.match(text.stdout, /heard: yes, claimed within [\d.]+ s/);
});

test('doctor ENDPOINT with a connected client that does not listen exits 1 with unheard and the hints', async () => {
  const ep = await endpointOf(pool, me.humanId, 'deaf');
  await agent(pool, s.url, ep.credential, { name: 'claude-code' });
  const { code, stdout } = await doctor([ep.slug, '--wait', '10s']);
  assert.equal(code, 1);
  assert.match(stdout, /UNHEARD: delivered to the stream, but nothing claimed it/);
  assert.match(stdout, /delivered: yes/);
  assert.match(stdout, /heard: no/);
  assert.ok(stdout.includes(`--dangerously-load-development-channels server:${ep.slug} `), stdout);
  assert.ok(stdout.includes(`--allowedTools mcp__${ep.slug},`), stdout);
  assert.match(stdout, /doctor: problems found/);
});

test('doctor ENDPOINT with nothing connected exits 1 with no_session', async () => {
  const ep = await endpointOf(pool, me.humanId, 'empty');
  const { code, stdout } = await doctor([ep.slug, '--json']);
  assert.equal(code, 1);
  const answer = JSON.parse(stdout) as { ok: boolean; doorbell_test: { verdict: string; hints: string[] } };
  assert.equal(answer.ok, false);
  assert.equal(answer.doorbell_test.verdict, 'no_session');
  assert.match(answer.doorbell_test.hints[0] ?? '', /Nothing is connected/);
  const text = await doctor([ep.slug]);
  assert.equal(text.code, 1);
  assert.ok(text.stdout.includes(WITHOUT_SESSION), text.stdout);
  assert.match(text.stdout, /switchboard endpoint connect ENDPOINT` prints MCP Inspector CLI commands/);
});

test('doctor not signed in fails the credentials check, names `switchboard login`, and asks for nothing', async () => {
  const ep = await endpointOf(pool, me.humanId, 'unsigned');
  const { code, stdout } = await doctor([ep.slug], null);
  assert.equal(code, 1);
  assert.match(stdout, /FAIL\s+credentials\s+not signed in: run `switchboard login/);
  assert.doesNotMatch(stdout, /sbk_/);
});

test('doctor --wait outside 10s–300s is a usage error naming --wait', async () => {
  const { code, stderr } = await doctor(['some-endpoint', '--wait', '5s']);
  assert.equal(code, 2);
  assert.match(stderr, /--wait: "5s" must be a duration from 10s to 300s/);
});

test('doctor warns about an endpoint whose live sessions hold no stream, and says what to run', async () => {
  const ep = await endpointOf(pool, me.humanId, 'streamless');
  await agent(pool, s.url, ep.credential, { name: 'claude-code', stream: false });
  const { code, stdout, stderr } = await doctor(['--json']);
  assert.equal(code, 0, stderr);
  const answer = JSON.parse(stdout) as {
    ok: boolean;
    checks: Array<{ name: string; ok: boolean; severity?: string; detail: string }>;
  };
  // Earlier tests' agents have gone, leaving sessions without a stream too: look at this one's.
  const warned = answer.checks.filter((c) => c.name === 'stream' && c.detail.includes(`endpoint ${ep.slug}:`));
  assert.equal(warned.length, 1, JSON.stringify(answer.checks));
  assert.equal(warned[0]?.ok, false);
  assert.equal(warned[0]?.severity, 'warning');
  assert.match(warned[0]?.detail ?? '', new RegExp(`endpoint ${ep.slug}: 1 live session\\(s\\), none holds`));
  assert.match(warned[0]?.detail ?? '', /switchboard bridge/);
  assert.match(warned[0]?.detail ?? '', /claim_next.*wait_seconds/);
  assert.ok(warned[0]?.detail.includes(`server:${ep.slug}`), 'the channel flag names this endpoint');
  assert.ok(warned[0]?.detail.includes(WITHOUT_SESSION), 'how a client without a session finishes its work');
  const text = await doctor([]);
  assert.match(text.stdout, /WARN\s+stream\s+endpoint /);

  // A session that never opened a stream nor asked for doorbells only pulls: no warning.
  const pulling = await endpointOf(pool, me.humanId, 'pull-only');
  await agent(pool, s.url, pulling.credential, { name: 'inspector', stream: false, channel: false });
  const quiet = JSON.parse((await doctor(['--json'])).stdout) as typeof answer & {
    endpoints: Array<{ slug: string; sessions: Array<{ had_stream: boolean }> }>;
  };
  assert.ok(!quiet.checks.some((c) => c.name === 'stream' && c.detail.includes(`endpoint ${pulling.slug}:`)));
  assert.deepEqual(
    quiet.endpoints.find((e) => e.slug === pulling.slug)?.sessions.map((x) => x.had_stream),
    [false],
  );
  assert.match(
    (await doctor([])).stdout,
    new RegExp(
      `endpoint ${pulling.slug} \\(active\\): 1 live session\\(s\\)\\n.*\\n\\S+\\s+.*\\s+pulls \\(no stream\\)\\s+ok`,
    ),
  );
  assert.doesNotMatch(text.stdout, /doctor: all good/);
  assert.match(text.stdout, /doctor: no failures, but see the warnings above/);
});
