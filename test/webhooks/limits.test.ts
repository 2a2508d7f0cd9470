// Pins the per-webhook rate limit (429 with Retry-After, each webhook its own bucket) and the intake metrics: deliveries by provider and verdict, verification failures by reason.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, vend, PUBLIC_URL, type Reply } from '../api/app.js';
import * as send from './senders.js';

const h = await apiHarness('webhook_limits', async () => null, {
  SWITCHBOARD_WEBHOOK_RATE: '1',
  SWITCHBOARD_WEBHOOK_BURST: '3',
});
const { member } = await makePeople(h);
beforeEach(async () => {
  await h.fresh();
  h.frozenAt = new Date();
});
const { endpoint } = await vend(h, member, { name: 'limited', queues: ['inbox'] });

async function makeWebhook(provider: string): Promise<{ url: string; secret: string }> {
  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox', provider },
  });
  expectStatus(res, 201);
  return { url: res.body.url, secret: res.body.secret };
}

function deliver(url: string, signed: send.Signed): Promise<Reply> {
  return h.post(url.slice(PUBLIC_URL.length), { payload: signed.raw, headers: signed.headers });
}

async function series(name: string, labels: Record<string, string>): Promise<number> {
  const text = await h.services.metrics.registry.metrics();
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${want}}`));
  return line === undefined ? NaN : Number(line.split(' ').pop());
}

test('past its burst a webhook answers 429 with Retry-After and writes nothing; another webhook has its own bucket', async () => {
  const busy = await makeWebhook('standard');
  const quiet = await makeWebhook('standard');
  const body = (n: number) => JSON.stringify({ type: 'ping', data: { id: `p${n}` } });
  for (let i = 0; i < 3; i++) expectStatus(await deliver(busy.url, send.standard(busy.secret, body(i))), 201, `#${i}`);
  const before = await h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_events');
  const limited = await deliver(busy.url, send.standard(busy.secret, body(9)));
  expectError(limited, 429, 'resource_exhausted');
  assert.equal(limited.headers['retry-after'], '1');
  const after = await h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_events');
  assert.equal(after.rows[0]?.n, before.rows[0]?.n);
  expectStatus(await deliver(quiet.url, send.standard(quiet.secret, body(10))), 201, 'another webhook');
  h.frozenAt = new Date(h.frozenAt!.getTime() + 1_000);
  expectStatus(await deliver(busy.url, send.standard(busy.secret, body(11))), 201, 'a second later');
  assert.ok(
    (await series('switchboard_webhook_deliveries_total', { provider: 'standard', verdict: 'rate_limited' })) >= 1,
  );
});

test('deliveries are counted by provider and verdict, and verification failures by reason', async () => {
  const { url, secret } = await makeWebhook('github');
  const accepted = () => series('switchboard_webhook_deliveries_total', { provider: 'github', verdict: 'accepted' });
  const duplicate = () => series('switchboard_webhook_deliveries_total', { provider: 'github', verdict: 'duplicate' });
  const rejected = () => series('switchboard_webhook_deliveries_total', { provider: 'github', verdict: 'rejected' });
  const bad = () =>
    series('switchboard_webhook_verify_failures_total', { provider: 'github', reason: 'bad_signature' });
  const [a0, d0, r0, b0] = [await accepted(), await duplicate(), await rejected(), await bad()];
  const raw = await send.fixture('github-issues.json');
  const signed = await send.github(secret, 'issues', raw, 'counted-1');
  expectStatus(await deliver(url, signed), 201);
  expectStatus(await deliver(url, signed), 200);
  expectError(await deliver(url, await send.github('whsec_wrong', 'issues', raw)), 401, 'unauthenticated');
  assert.equal(await accepted(), a0 + 1);
  assert.equal(await duplicate(), d0 + 1);
  assert.equal(await rejected(), r0 + 1);
  assert.equal(await bad(), b0 + 1);
  assert.equal(
    await series('switchboard_webhook_verify_failures_total', { provider: 'slack', reason: 'stale_timestamp' }),
    0,
  );
});
