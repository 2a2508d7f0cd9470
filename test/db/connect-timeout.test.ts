// Pins SWITCHBOARD_DB_CONNECT_TIMEOUT: a first host that accepts TCP connections and then
// never answers (a blackhole: a listening socket that reads and writes nothing, like a
// dead machine behind a route that still takes SYNs) costs one per-host timeout, after
// which the pool, the LISTEN connection and migrations move on to the second host in the
// same call, and later connections start at the host that worked. A URL naming only the
// blackhole fails as "unreachable" (so /readyz says not ready) instead of hanging.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { NotifyBus } from '../../src/db/bus.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { databaseProblem } from '../../src/db/unavailable.js';
import { parseConfig } from '../../src/config/schema.js';
import { emptyDatabase } from '../helpers/db.js';

let blackhole: Server;
let blackholePort = 0;
const sockets = new Set<Socket>();
/** Connections the blackhole accepted: one per connection attempt that tried it. */
let accepted = 0;
let realUrl = '';

before(async () => {
  blackhole = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // Reads the startup packet and answers nothing, ever.
    socket.resume();
  });
  blackhole.listen(0, '127.0.0.1');
  await once(blackhole, 'listening');
  const address = blackhole.address();
  assert.ok(address && typeof address === 'object');
  blackholePort = address.port;
  realUrl = await emptyDatabase('connect-timeout');
});

after(async () => {
  for (const s of sockets) s.destroy();
  blackhole.close();
});

/** The test database's URL with the blackhole listed before its host. */
function blackholeFirst(): string {
  const real = new URL(realUrl);
  // The credentials as the test database has them (the embedded server wants a password).
  const auth = real.password ? `${real.username}:${real.password}` : real.username;
  return `postgres://${auth}@127.0.0.1:${blackholePort},${real.host}${real.pathname}?target_session_attrs=read-write`;
}

test('SWITCHBOARD_DB_CONNECT_TIMEOUT: 5 s by default, a duration of 100ms–60s, a bad one named', () => {
  const none = parseConfig({});
  assert.ok(none.ok);
  assert.equal(none.config.database.connectTimeoutMs, 5_000);
  const set = parseConfig({ SWITCHBOARD_DB_CONNECT_TIMEOUT: '750ms' });
  assert.ok(set.ok);
  assert.equal(set.config.database.connectTimeoutMs, 750);
  for (const bad of ['0', '50ms', '2m', 'soon']) {
    const r = parseConfig({ SWITCHBOARD_DB_CONNECT_TIMEOUT: bad });
    assert.ok(!r.ok, bad);
    assert.match(JSON.stringify(r), /SWITCHBOARD_DB_CONNECT_TIMEOUT/);
  }
});

test('a blackholed first host: the pool connects to the second in the same checkout, and stays there', async () => {
  accepted = 0;
  const pool = createPool({ url: blackholeFirst(), max: 4, connectTimeoutMs: 300 });
  try {
    // One call, no retry loop around it: the checkout itself tries the next host.
    const first = await pool.query<{ port: number }>('SELECT inet_server_port() AS port');
    assert.equal(first.rows[0]!.port, Number(new URL(realUrl).port || 5432));
    assert.equal(accepted, 1, 'the blackhole was tried once');
    // Several new connections at once: each starts at the host that worked.
    const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
    for (const c of clients) c.release();
    assert.equal(pool.totalCount, 4);
    assert.equal(accepted, 1, 'later connections did not knock on the blackhole again');
  } finally {
    await pool.end();
  }
});

test('a blackholed first host: the LISTEN connection and migrations connect to the second', async () => {
  accepted = 0;
  const url = blackholeFirst();
  await migrate(url, undefined, { connectTimeoutMs: 300 });
  assert.equal(accepted, 1);
  const bus = new NotifyBus({ url, connectTimeoutMs: 300 });
  try {
    await bus.start();
    assert.ok(bus.listening);
    assert.equal(accepted, 2, 'a fresh Hosts starts at the first host, gives up on it after the timeout');
  } finally {
    await bus.stop();
  }
});

test('only the blackhole: the checkout fails as unreachable after the per-host timeout, it does not hang', async () => {
  accepted = 0;
  const real = new URL(realUrl);
  const pool = createPool({
    url: `postgres://${real.username}@127.0.0.1:${blackholePort}${real.pathname}`,
    max: 2,
    connectTimeoutMs: 200,
  });
  try {
    const err = await pool.query('SELECT 1').then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err, 'the query failed');
    assert.equal(databaseProblem(err), 'database_unreachable', String(err));
    assert.equal(accepted, 1);
  } finally {
    await pool.end();
  }
});
