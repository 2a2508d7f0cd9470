// Pins the environment schema: defaults, durations, every problem listed at once, and
// docs/configuration.md's tables of variables matching the schema exactly.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ENV_VARS, formatDuration, isLoopbackHost, parseConfig, parseDuration } from '../../src/config/index.js';

test('durations accept 90s, 15m, 6h and 30d and refuse bare numbers', () => {
  assert.equal(parseDuration('90s'), 90_000);
  assert.equal(parseDuration('15m'), 900_000);
  assert.equal(parseDuration('6h'), 21_600_000);
  assert.equal(parseDuration('30d'), 2_592_000_000);
  assert.equal(parseDuration('250ms'), 250);
  for (const bad of ['30', '', 'm', '1.5.2s', '-5s', '5 s', '5w']) assert.equal(parseDuration(bad), null, bad);
  assert.equal(formatDuration(900_000), '15m');
  assert.equal(formatDuration(90_000), '90s');
});

test('an empty environment gives the documented defaults', () => {
  const result = parseConfig({});
  assert.ok(result.ok);
  const c = result.config;
  assert.deepEqual(c.listen, { host: '127.0.0.1', port: 8080 });
  assert.equal(c.publicUrl, 'http://127.0.0.1:8080');
  assert.equal(c.database.url, null);
  assert.equal(c.database.dataDir, './.switchboard');
  assert.equal(c.todos.defaultLeaseSeconds, 300);
  assert.equal(c.sweeps.reaperIntervalMs, 30_000);
  assert.equal(c.sweeps.retentionMs, 30 * 86_400_000);
  assert.equal(c.sweeps.retentionIntervalMs, 3_600_000);
  assert.deepEqual(c.api.perSocket, { perSecond: 20, burst: 40 });
});

test('every problem in the environment is listed together, each naming its variable', () => {
  const result = parseConfig({
    SWITCHBOARD_LISTEN: 'localhost',
    SWITCHBOARD_DEFAULT_LEASE: '2s',
    SWITCHBOARD_RETENTION: 'forever',
    SWITCHBOARD_DB_POOL_SIZE: '1',
    SWITCHBOARD_DATABASE_URL: 'mysql://x',
    SWITCHBOARD_LOG_LEVEL: 'loud',
    SWITCHBOARD_LSTEN: '127.0.0.1:1',
  });
  assert.ok(!result.ok);
  const named = [
    'SWITCHBOARD_LISTEN',
    'SWITCHBOARD_DEFAULT_LEASE',
    'SWITCHBOARD_RETENTION',
    'SWITCHBOARD_DB_POOL_SIZE',
    'SWITCHBOARD_DATABASE_URL',
    'SWITCHBOARD_LOG_LEVEL',
    'SWITCHBOARD_LSTEN',
  ];
  assert.equal(result.problems.length, named.length, result.problems.join('\n'));
  for (const name of named)
    assert.ok(
      result.problems.some((p) => p.startsWith(`${name}:`)),
      name,
    );
  assert.match(result.problems.find((p) => p.startsWith('SWITCHBOARD_LSTEN')) ?? '', /unknown variable/);
});

test('IPv6 listen addresses and loopback detection', () => {
  const result = parseConfig({ SWITCHBOARD_LISTEN: '[::1]:9000' });
  assert.ok(result.ok);
  assert.deepEqual(result.config.listen, { host: '::1', port: 9000 });
  assert.equal(result.config.publicUrl, 'http://[::1]:9000');
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) assert.ok(isLoopbackHost(host), host);
  for (const host of ['0.0.0.0', '10.0.0.1', '::', 'example.test']) assert.ok(!isLoopbackHost(host), host);
});

test('docs/configuration.md documents exactly the variables the schema reads, each once', () => {
  const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\|\s*`((?:SWITCHBOARD|KANDEV|OTEL)_[A-Z_]+)`\s*\|/gm)].map((m) => m[1] ?? '');
  const rows = new Set(documented);
  assert.equal(rows.size, documented.length, 'a variable has two rows');
  const missing = ENV_VARS.filter((name) => !rows.has(name));
  const unknown = documented.filter((name) => !ENV_VARS.includes(name));
  assert.deepEqual({ missing, unknown }, { missing: [], unknown: [] });
  // A SWITCHBOARD_ name anywhere in the page (prose included) is one the server reads.
  const mentioned = new Set([...doc.matchAll(/\bSWITCHBOARD_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]));
  assert.deepEqual(
    [...mentioned].filter((name) => !ENV_VARS.includes(name)),
    [],
    'docs/configuration.md names a variable the schema does not read',
  );
});

test('instance liveness: heartbeat 5s and dead after three beats by default; a threshold under two beats is refused', () => {
  const defaults = parseConfig({});
  assert.ok(defaults.ok);
  assert.deepEqual(defaults.config.instances, { heartbeatMs: 5_000, deadAfterMs: 15_000 });
  const short = parseConfig({ SWITCHBOARD_INSTANCE_HEARTBEAT: '250ms' });
  assert.ok(short.ok);
  assert.deepEqual(short.config.instances, { heartbeatMs: 250, deadAfterMs: 750 });
  const set = parseConfig({ SWITCHBOARD_INSTANCE_HEARTBEAT: '2s', SWITCHBOARD_INSTANCE_DEAD_AFTER: '1m' });
  assert.ok(set.ok);
  assert.deepEqual(set.config.instances, { heartbeatMs: 2_000, deadAfterMs: 60_000 });
  const tight = parseConfig({ SWITCHBOARD_INSTANCE_HEARTBEAT: '5s', SWITCHBOARD_INSTANCE_DEAD_AFTER: '9s' });
  assert.ok(!tight.ok);
  assert.match(tight.problems.join('\n'), /SWITCHBOARD_INSTANCE_DEAD_AFTER: must be at least twice/);
  const bad = parseConfig({ SWITCHBOARD_INSTANCE_HEARTBEAT: '5', SWITCHBOARD_INSTANCE_DEAD_AFTER: '2h' });
  assert.ok(!bad.ok);
  assert.equal(bad.problems.length, 2, bad.problems.join('\n'));
});

test('retention: 7d for sessions, sign-ins and doorbell records, 30d for tokens and delivery ids; floors refused below', () => {
  const defaults = parseConfig({});
  assert.ok(defaults.ok);
  const day = 86_400_000;
  assert.deepEqual(defaults.config.retention, {
    mcpSessionsMs: 7 * day,
    signInMs: 7 * day,
    apiTokensMs: 30 * day,
    webhookDeliveriesMs: 30 * day,
    webhookEventsMs: 30 * day,
    webhookEventsPerEndpoint: 10_000,
    doorbellMs: 7 * day,
    admissionAuditMs: 30 * day,
    rollupsMs: 2 * day,
    oauthMs: 7 * day,
    oauthTokenLifeMs: 30 * day,
    quarantineMs: 30 * day,
  });
  const set = parseConfig({ SWITCHBOARD_RETENTION: '90d', SWITCHBOARD_WEBHOOK_DEDUP_RETENTION: '4d' });
  assert.ok(set.ok);
  assert.equal(set.config.retention.admissionAuditMs, 90 * day, 'the audit follows SWITCHBOARD_RETENTION');
  assert.equal(set.config.retention.webhookDeliveriesMs, 4 * day);
  const short = parseConfig({
    SWITCHBOARD_WEBHOOK_DEDUP_RETENTION: '3d',
    SWITCHBOARD_DOORBELL_RETENTION: '6h',
    SWITCHBOARD_MCP_SESSION_RETENTION: '30m',
  });
  assert.ok(!short.ok);
  assert.equal(short.problems.length, 3, short.problems.join('\n'));
  assert.deepEqual(defaults.config.webhooks, {
    perWebhook: { perSecond: 10, burst: 50 },
    secretGraceSeconds: 86_400,
  });
  assert.match(
    short.problems.join('\n'),
    /SWITCHBOARD_WEBHOOK_DEDUP_RETENTION: "3d" is outside the allowed range 4d–3650d/,
  );
});

test('the database guard rails default to 30s, 60s and 5s (lock), take durations, and 0 switches them off', () => {
  const defaults = parseConfig({});
  assert.ok(defaults.ok);
  assert.equal(defaults.config.database.statementTimeoutMs, 30_000);
  assert.equal(defaults.config.database.idleInTransactionTimeoutMs, 60_000);
  assert.equal(defaults.config.database.lockTimeoutMs, 5_000);
  const set = parseConfig({
    SWITCHBOARD_STATEMENT_TIMEOUT: '2m',
    SWITCHBOARD_IDLE_IN_TRANSACTION_TIMEOUT: '0',
    SWITCHBOARD_LOCK_TIMEOUT: '0',
  });
  assert.ok(set.ok);
  assert.equal(set.config.database.statementTimeoutMs, 120_000);
  assert.equal(set.config.database.idleInTransactionTimeoutMs, 0);
  assert.equal(set.config.database.lockTimeoutMs, 0);
  const off = parseConfig({ SWITCHBOARD_STATEMENT_TIMEOUT: '0s' });
  assert.ok(off.ok);
  assert.equal(off.config.database.statementTimeoutMs, 0);
  const bad = parseConfig({
    SWITCHBOARD_STATEMENT_TIMEOUT: '30',
    SWITCHBOARD_IDLE_IN_TRANSACTION_TIMEOUT: '10ms',
    SWITCHBOARD_LOCK_TIMEOUT: '50ms',
  });
  assert.ok(!bad.ok);
  const text = JSON.stringify(bad);
  assert.match(text, /SWITCHBOARD_STATEMENT_TIMEOUT/);
  assert.match(text, /SWITCHBOARD_IDLE_IN_TRANSACTION_TIMEOUT/);
  assert.match(text, /SWITCHBOARD_LOCK_TIMEOUT/);
});

test('the signing-secret key: 32 bytes as base64 or hex, or a file; anything else names the variable', () => {
  const none = parseConfig({});
  assert.ok(none.ok);
  assert.deepEqual(none.config.secrets, { key: null, keyFile: null, previous: null });
  const b64 = Buffer.alloc(32, 7).toString('base64');
  const set = parseConfig({ SWITCHBOARD_SECRET_KEY: b64, SWITCHBOARD_SECRET_KEY_PREVIOUS: 'ab'.repeat(32) });
  assert.ok(set.ok);
  assert.equal(set.config.secrets.key, b64);
  const file = parseConfig({ SWITCHBOARD_SECRET_KEY_FILE: '/run/secrets/switchboard-key' });
  assert.ok(file.ok);
  assert.equal(file.config.secrets.keyFile, '/run/secrets/switchboard-key');
  const bad = parseConfig({ SWITCHBOARD_SECRET_KEY: 'c2hvcnQ=' });
  assert.ok(!bad.ok);
  assert.match(bad.problems.join('\n'), /SWITCHBOARD_SECRET_KEY: must be 32 bytes/);
});
