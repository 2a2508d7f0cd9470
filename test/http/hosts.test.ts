// Pins the DNS-rebinding guard: a foreign Host is refused 421 before routing, a foreign
// Origin is refused 403 on /mcp and /ws, and the allow-list the config builds.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/schema.js';
import { hostAllowed, hostExempt, originAllowed } from '../../src/http/hosts.js';
import { localAdmin } from '../../src/identity/setup.js';
import { apiHarness, expectStatus, PUBLIC_URL } from '../api/app.js';
import { listening, wsClient } from '../messages/api.js';

// Auth off on the default loopback bind: the set-up a rebinding page aims at.
const h = await apiHarness('http_hosts', (pool) => localAdmin({ db: pool, publicUrl: PUBLIC_URL }));
let base: Promise<string> | undefined;
/** The harness listening on a loopback port, started once for the WebSocket tests. */
const listeningBase = () => (base ??= listening(h));

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

test('a request whose Host is a foreign name is refused 421 before routing, with auth off on loopback', async () => {
  for (const url of ['/api/v1/whoami', '/api/v1/endpoints', '/', '/mcp', '/metrics', '/no/such/route']) {
    const res = await h.get(url, { headers: { host: 'evil.example:8080' } });
    expectStatus(res, 421, url);
    assert.equal(res.body.error.code, 'forbidden');
    assert.match(res.body.error.message, /evil\.example/);
  }
  const created = await h.post('/api/v1/endpoints', { body: { name: 'x' }, headers: { host: 'evil.example' } });
  expectStatus(created, 421);
  assert.equal((await h.get('/api/v1/endpoints')).body.endpoints.length, 0, 'nothing was created');
});

test('loopback names with any port and the public URL host are served', async () => {
  for (const host of [
    'localhost',
    'localhost:9',
    '127.0.0.1:8080',
    '[::1]:8080',
    'switchboard.test',
    'SWITCHBOARD.test:8080',
  ]) {
    expectStatus(await h.get('/api/v1/whoami', { headers: { host } }), 200, host);
  }
});

test('health probes answer whatever Host they carry; an open /metrics does not', async () => {
  expectStatus(await h.get('/healthz', { headers: { host: '10.1.2.3:8080' } }), 200);
  expectStatus(await h.get('/metrics', { headers: { host: '10.1.2.3:8080' } }), 421);
  assert.equal(hostExempt('/metrics', true), true, 'a token-guarded /metrics is scraped by address');
  assert.equal(hostExempt('/metrics?x=1', false), false);
  assert.equal(hostExempt('/readyz?verbose', false), true);
});

test('/mcp refuses a foreign Origin with 403 and serves a loopback, public-URL or absent one', async () => {
  const vended = await h.post('/api/v1/endpoints', { body: { name: 'mcp-origin', queues: ['inbox'] } });
  expectStatus(vended, 201);
  const credential = vended.body.credential as string;
  const mcp = (origin?: string) =>
    h.post('/mcp', {
      token: credential,
      body: INITIALIZE,
      headers: { accept: 'application/json, text/event-stream', ...(origin ? { origin } : {}) },
    });
  const foreign = await mcp('http://evil.example');
  expectStatus(foreign, 403);
  assert.equal(foreign.body.jsonrpc, '2.0');
  assert.match(foreign.body.error.message, /Origin/);
  expectStatus(await mcp('null'), 403);
  for (const origin of [undefined, 'http://localhost:80', 'http://127.0.0.1:8080', PUBLIC_URL]) {
    expectStatus(await mcp(origin), 200, origin ?? 'no Origin');
  }
});

test('/mcp compares the whole Origin: a loopback or public name on another port or scheme is refused', async () => {
  const vended = await h.post('/api/v1/endpoints', { body: { name: 'mcp-whole-origin', queues: ['inbox'] } });
  expectStatus(vended, 201);
  for (const origin of [
    'http://127.0.0.1:3000',
    'http://localhost:3000',
    'http://[::1]:5173',
    'https://127.0.0.1:8080',
    'https://switchboard.test:8080',
    'http://switchboard.test',
  ]) {
    const res = await h.post('/mcp', {
      token: vended.body.credential as string,
      body: INITIALIZE,
      headers: { accept: 'application/json, text/event-stream', origin },
    });
    expectStatus(res, 403, origin);
  }
});

test('the WebSocket refuses a foreign Origin and accepts a loopback one', async () => {
  const base = await listeningBase();
  await assert.rejects(wsClient(base, { origin: 'http://evil.example' }), /HTTP 403/);
  const local = await wsClient(base, { origin: base });
  local.close();
});

test('the WebSocket refuses a loopback Origin on another port: another local server’s page', async () => {
  const base = await listeningBase();
  for (const origin of ['http://127.0.0.1:3000', 'http://localhost:5173']) {
    await assert.rejects(wsClient(base, { origin }), /HTTP 403/, origin);
  }
});

test('the config allows the public URL host, loopback names on a loopback bind, and the extra hosts', () => {
  const loop = parseConfig({ SWITCHBOARD_LISTEN: '127.0.0.1:8080' });
  assert.ok(loop.ok);
  assert.deepEqual(new Set(loop.config.allowedHosts), new Set(['localhost', '127.0.0.1', '[::1]']));
  const token = 'x'.repeat(32);
  const wide = parseConfig({
    SWITCHBOARD_LISTEN: '0.0.0.0:8080',
    SWITCHBOARD_METRICS_TOKEN: token,
    SWITCHBOARD_PUBLIC_URL: 'https://Switchboard.Example.com',
    SWITCHBOARD_ALLOWED_HOSTS: 'sb.internal, 10.0.0.5',
  });
  assert.ok(wide.ok, wide.ok ? '' : wide.problems.join('; '));
  assert.deepEqual(new Set(wide.config.allowedHosts), new Set(['switchboard.example.com', 'sb.internal', '10.0.0.5']));
  assert.equal(hostAllowed(wide.config.allowedHosts, 'localhost:8080'), false, 'no loopback names off loopback');
  const open = parseConfig({ SWITCHBOARD_LISTEN: '0.0.0.0:8080', SWITCHBOARD_METRICS_TOKEN: token });
  assert.ok(open.ok);
  assert.equal(open.config.allowedHosts, null, 'nothing names the server: any Host');
  assert.equal(hostAllowed(null, 'anything.example'), true);
  assert.deepEqual(
    new Set(loop.config.allowedOrigins),
    new Set(['http://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080']),
  );
  assert.deepEqual(
    new Set(wide.config.allowedOrigins),
    new Set(['https://switchboard.example.com', 'http://0.0.0.0:8080', 'https://sb.internal', 'https://10.0.0.5']),
  );
  const bad = parseConfig({ SWITCHBOARD_ALLOWED_HOSTS: 'ok.example, evil.example:80' });
  assert.ok(!bad.ok && bad.problems.some((p) => p.startsWith('SWITCHBOARD_ALLOWED_HOSTS')));
});

test('with any Host served, an Origin must still be the origin the request was addressed to', () => {
  const check = { origins: [], host: 'sb.example:8080', protocol: 'http' };
  assert.equal(originAllowed('http://sb.example:8080', check), true);
  assert.equal(originAllowed('http://evil.example', check), false);
  assert.equal(originAllowed(undefined, check), true);
  assert.equal(hostAllowed(['a.example'], 'a.example@evil.example'), false);
  assert.equal(hostAllowed(['a.example'], undefined), false);
});

test('the config refuses a bind beyond loopback without SWITCHBOARD_METRICS_TOKEN, naming it', () => {
  for (const listen of ['0.0.0.0:8080', '[::]:8080', '10.0.0.5:8080']) {
    const result = parseConfig({ SWITCHBOARD_LISTEN: listen });
    assert.ok(!result.ok, listen);
    assert.ok(
      !result.ok && result.problems.some((p) => p.startsWith('SWITCHBOARD_METRICS_TOKEN: required when listening on')),
      listen,
    );
  }
  assert.ok(parseConfig({ SWITCHBOARD_LISTEN: '127.0.0.1:8080' }).ok, 'open /metrics on loopback');
  assert.ok(parseConfig({ SWITCHBOARD_LISTEN: '0.0.0.0:8080', SWITCHBOARD_METRICS_TOKEN: 'm'.repeat(32) }).ok);
});

test('the conformance suite’s rebinding check: Host and Origin evil.example.com refused, loopback ones answered', async () => {
  const vended = await h.post('/api/v1/endpoints', { body: { name: 'rebinding', queues: ['inbox'] } });
  expectStatus(vended, 201);
  const send = (hostOrOrigin: string) =>
    h.post('/mcp', {
      token: vended.body.credential as string,
      body: INITIALIZE,
      headers: {
        host: hostOrOrigin,
        origin: `http://${hostOrOrigin}`,
        accept: 'application/json, text/event-stream',
      },
    });
  const evil = await send('evil.example.com');
  assert.ok(evil.status >= 400 && evil.status < 500, `evil: ${evil.status}`);
  const local = await send('127.0.0.1:41234');
  assert.ok(local.status >= 200 && local.status < 300, `loopback: ${local.status} ${local.text}`);
});
