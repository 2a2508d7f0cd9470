// Pins how a libpq-style database URL with one or several hosts is read: each host's port,
// the per-host URL node-postgres gets, target_session_attrs and its default, and the
// problem text (naming the field) for a URL that cannot work.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'pg-connection-string';
import { parseDatabaseUrl, roleFits, type DatabaseTarget } from '../../src/domain/database-url.js';
import { parseConfig } from '../../src/config/index.js';

function target(url: string): DatabaseTarget {
  const parsed = parseDatabaseUrl(url);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problem);
  return parsed.target;
}

function problem(url: string): string {
  const parsed = parseDatabaseUrl(url);
  assert.ok(!parsed.ok, `${url} parsed`);
  return parsed.problem;
}

/** What node-postgres makes of each per-host URL. */
function pgConfigs(t: DatabaseTarget) {
  return t.urls.map((u) => {
    const c = parse(u);
    return { host: c.host, port: c.port, user: c.user, password: c.password, database: c.database };
  });
}

test('several hosts each keep their own port, and a host without one gets 5432', () => {
  const t = target('postgres://sb:pw@h1:5433,h2,h3:6000/switchboard?target_session_attrs=read-write');
  assert.deepEqual(t.hosts, [
    { host: 'h1', port: 5433 },
    { host: 'h2', port: 5432 },
    { host: 'h3', port: 6000 },
  ]);
  assert.equal(t.attrs, 'read-write');
  assert.equal(t.where, 'h1:5433,h2:5432,h3:6000/switchboard');
  assert.deepEqual(pgConfigs(t), [
    { host: 'h1', port: '5433', user: 'sb', password: 'pw', database: 'switchboard' },
    { host: 'h2', port: '5432', user: 'sb', password: 'pw', database: 'switchboard' },
    { host: 'h3', port: '6000', user: 'sb', password: 'pw', database: 'switchboard' },
  ]);
  for (const u of t.urls) assert.doesNotMatch(u, /target_session_attrs/);
});

test('IPv6 addresses in brackets, with and without a port', () => {
  const t = target('postgresql://u@[::1]:5433,[fe80::2]/db');
  assert.deepEqual(t.hosts, [
    { host: '::1', port: 5433 },
    { host: 'fe80::2', port: 5432 },
  ]);
  assert.equal(t.servers, '[::1]:5433,[fe80::2]:5432');
  assert.deepEqual(
    pgConfigs(t).map((c) => [c.host, c.port]),
    [
      ['::1', '5433'],
      ['fe80::2', '5432'],
    ],
  );
  assert.match(problem('postgres://u@::1:5432/db'), /IPv6 address in brackets/);
  assert.match(problem('postgres://u@[::1:5432/db'), /closing \]/);
});

test('percent-encoded user and password reach node-postgres decoded, and a broken encoding names the field', () => {
  const t = target('postgres://us%40er:p%3Aw%2Fd%25@h1,h2/db');
  assert.deepEqual(
    pgConfigs(t).map((c) => [c.user, c.password]),
    [
      ['us@er', 'p:w/d%'],
      ['us@er', 'p:w/d%'],
    ],
  );
  assert.match(problem('postgres://u:p%zz@h1/db'), /^the password /);
  assert.match(problem('postgres://u%zz:p@h1/db'), /^the user /);
});

test('one host and no target_session_attrs means any (no check); several hosts default to read-write', () => {
  assert.equal(target('postgres://u@h1/db').attrs, 'any');
  assert.equal(target('postgres://u@h1,h2/db').attrs, 'read-write');
  assert.equal(target('postgres://u@h1,h2/db?target_session_attrs=any').attrs, 'any');
  assert.equal(target('postgres://u@h1/db?target_session_attrs=primary').attrs, 'primary');
  assert.match(problem('postgres://u@h1,h2/db?target_session_attrs=writable'), /^target_session_attrs: "writable"/);
});

test('other query parameters ride along to every host', () => {
  const t = target('postgres://u@h1,h2/db?sslmode=disable&application_name=sb&target_session_attrs=primary');
  for (const u of t.urls) {
    const c = parse(u);
    assert.equal(c.application_name, 'sb');
    assert.equal(c.ssl, false);
  }
});

test('unix sockets: the host= parameter (a list, as libpq takes it), with one port or one per host', () => {
  const one = target('postgres://u@/db?host=/var/run/postgresql');
  assert.deepEqual(one.hosts, [{ host: '/var/run/postgresql', port: 5432 }]);
  assert.equal(parse(one.urls[0]!).host, '/var/run/postgresql');
  const two = target('postgres://u@/db?host=/tmp/a,/tmp/b&port=5433,5434');
  assert.deepEqual(two.hosts, [
    { host: '/tmp/a', port: 5433 },
    { host: '/tmp/b', port: 5434 },
  ]);
  const shared = target('postgres://u@:5440/db?host=/tmp/a,/tmp/b');
  assert.deepEqual(
    shared.hosts.map((h) => h.port),
    [5440, 5440],
  );
  const encoded = target('postgres://u@%2Ftmp%2Fpg/db');
  assert.deepEqual(encoded.hosts, [{ host: '/tmp/pg', port: 5432 }]);
  assert.match(problem('postgres://u@/db?host=/a,/b&port=1,2,3'), /^port: 3 ports for 2 hosts/);
  assert.match(problem('postgres://u@h1/db?host=/tmp'), /^host: given both/);
});

test('no host at all leaves node-postgres its defaults, as before', () => {
  const t = target('postgres:///db');
  assert.deepEqual(t.hosts, []);
  assert.deepEqual(t.urls, ['postgres:///db']);
});

test('bad ports and empty host entries are named', () => {
  assert.match(problem('postgres://u@h1:0/db'), /^host h1: "0" is not a port/);
  assert.match(problem('postgres://u@h1:70000/db'), /^host h1: "70000" is not a port/);
  assert.match(problem('postgres://u@h1:abc,h2/db'), /^host h1: "abc"/);
  assert.match(problem('postgres://u@h1,,h2/db'), /^host list: an entry is empty/);
  assert.match(problem('postgres://u@h1/db?port=x'), /^port parameter: "x"/);
  assert.match(problem('mysql://h1/db'), /^must be postgres:\/\//);
});

test('roles: read-write refuses a read-only server, primary and standby go by recovery, prefer-standby takes anything on its second pass', () => {
  const primary = { readOnly: false, inRecovery: false };
  const standby = { readOnly: true, inRecovery: true };
  const readOnlyPrimary = { readOnly: true, inRecovery: false };
  assert.ok(roleFits('read-write', primary));
  assert.ok(!roleFits('read-write', standby));
  assert.ok(!roleFits('read-write', readOnlyPrimary));
  assert.ok(roleFits('primary', readOnlyPrimary));
  assert.ok(!roleFits('primary', standby));
  assert.ok(roleFits('read-only', readOnlyPrimary));
  assert.ok(roleFits('standby', standby));
  assert.ok(!roleFits('prefer-standby', primary, 1));
  assert.ok(roleFits('prefer-standby', primary, 2));
  assert.ok(roleFits('any', standby));
});

test('the config refuses a broken URL and a standby-seeking one, naming the variable', () => {
  const bad = parseConfig({ SWITCHBOARD_DATABASE_URL: 'postgres://u@h1:99999/db' });
  assert.ok(!bad.ok);
  assert.match(bad.problems.join('\n'), /SWITCHBOARD_DATABASE_URL: host h1: "99999" is not a port/);
  const standby = parseConfig({
    SWITCHBOARD_DATABASE_URL: 'postgres://u@h1,h2/db?target_session_attrs=prefer-standby',
  });
  assert.ok(!standby.ok);
  assert.match(
    standby.problems.join('\n'),
    /SWITCHBOARD_DATABASE_URL: target_session_attrs=prefer-standby cannot work/,
  );
  const busAlone = parseConfig({ SWITCHBOARD_BUS_DATABASE_URL: 'postgres://u@h1/db' });
  assert.ok(!busAlone.ok);
  assert.match(busAlone.problems.join('\n'), /SWITCHBOARD_BUS_DATABASE_URL: set only together/);
});

test('the bus URL defaults to the main URL and may name another server', () => {
  const main = 'postgres://u@bouncer:6432/db';
  const plain = parseConfig({ SWITCHBOARD_DATABASE_URL: main });
  assert.ok(plain.ok);
  assert.equal(plain.config.database.busUrl, null);
  const split = parseConfig({ SWITCHBOARD_DATABASE_URL: main, SWITCHBOARD_BUS_DATABASE_URL: 'postgres://u@h1,h2/db' });
  assert.ok(split.ok);
  assert.equal(split.config.database.busUrl, 'postgres://u@h1,h2/db');
});
