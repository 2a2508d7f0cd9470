// Pins provider webhooks: deliveries signed by each provider's own library or documented algorithm become todos with kind, title, actor and an event; a bad, tampered or stale one is 401 with nothing written; a redelivery is a duplicate; Slack's challenge and form bodies.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import {
  apiHarness,
  expectError,
  expectStatus,
  makePeople,
  snapshot,
  vend,
  PUBLIC_URL,
  type Reply,
} from '../api/app.js';
import * as send from './senders.js';

const h = await apiHarness('webhook_providers');
const { member } = await makePeople(h);
beforeEach(() => h.fresh());
const { endpoint } = await vend(h, member, { name: 'intake', queues: ['inbox', 'ci'] });

interface Made {
  webhook: { id: string; provider: string; queue: string };
  url: string;
  secret?: string;
}

async function makeWebhook(provider: string, extra: Record<string, unknown> = {}): Promise<Made> {
  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox', provider, ...extra },
  });
  expectStatus(res, 201, `create ${provider} webhook`);
  return res.body as Made;
}

function deliver(url: string, signed: send.Signed): Promise<Reply> {
  assert.ok(url.startsWith(PUBLIC_URL), url);
  return h.post(url.slice(PUBLIC_URL.length), { payload: signed.raw, headers: signed.headers });
}

async function todo(id: string) {
  const res = await h.get(`/api/v1/todos/${id}`, { token: member.token });
  expectStatus(res, 200);
  return res.body.todo as Record<string, unknown>;
}

async function event(id: string) {
  const res = await h.get(`/api/v1/events/${id}`, { token: member.token });
  expectStatus(res, 200);
  return res.body.event as Record<string, unknown> & { headers: Record<string, string> };
}

/** A verified delivery made one todo and one event, and both say what the provider sent. */
async function expectMade(
  res: Reply,
  want: { kind: string | null; title: string; actor: string | null; provider: string; deliveryId?: string },
) {
  expectStatus(res, 201, want.provider);
  assert.equal(res.body.created, true);
  assert.match(res.body.event_id, /^ev_/);
  assert.equal(res.body.todos.length, 1);
  assert.equal(res.body.todos[0].created, true);
  const made = await todo(res.body.todos[0].id);
  assert.equal(made.kind, want.kind);
  assert.equal(made.title, want.title);
  assert.equal(made.source, 'webhook');
  assert.equal(made.event_id, res.body.event_id);
  const ev = await event(res.body.event_id);
  assert.equal(ev.provider, want.provider);
  assert.equal(ev.type, want.kind);
  assert.equal(ev.actor, want.actor);
  assert.equal(ev.verified, want.provider !== 'token');
  assert.equal(ev.disposition, 'routed');
  assert.deepEqual(ev.todo_ids, [made.id]);
  if (want.deliveryId !== undefined) assert.equal(ev.delivery_id, want.deliveryId);
  for (const secretHeader of [
    'x-hub-signature-256',
    'x-gitea-signature',
    'x-forgejo-signature',
    'x-gitlab-token',
    'stripe-signature',
    'x-slack-signature',
    'webhook-signature',
    'authorization',
  ]) {
    assert.ok(!(secretHeader in ev.headers), `${secretHeader} is not kept`);
  }
  return { todo: made, event: ev };
}

/** A refused delivery: 401 naming why, and not one row written anywhere. */
async function expectRefused(url: string, signed: send.Signed, reason: string) {
  const before = await snapshot(h.pool);
  const res = await deliver(url, signed);
  expectError(res, 401, 'unauthenticated');
  assert.equal(res.body.error.details.reason, reason, res.text);
  assert.deepEqual(await snapshot(h.pool), before);
}

const tamper = (s: send.Signed): send.Signed => ({ ...s, raw: s.raw.replace(/"/, ' "') });

test('create with a signed provider shows a generated whsec_ secret once; token stays the default, with none', async () => {
  const gh = await makeWebhook('github');
  assert.equal(gh.webhook.provider, 'github');
  assert.match(gh.secret ?? '', /^whsec_[A-Za-z0-9+/]{43}=$/);
  const plain = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox' },
  });
  expectStatus(plain, 201);
  assert.equal(plain.body.webhook.provider, 'token');
  assert.equal(plain.body.secret, undefined);
  const listed = await h.get(`/api/v1/endpoints/${endpoint.slug}/webhooks`, { token: member.token });
  assert.ok(!listed.text.includes(gh.secret ?? '-'), 'the secret is never listed');
  const bad = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox', provider: 'bitbucket' },
  });
  expectError(bad, 400, 'invalid_argument', 'provider');
});

test('GitHub: pull_request, issues and issue_comment signed by @octokit/webhooks-methods become todos with kind, title and actor', async () => {
  const { url, secret } = await makeWebhook('github');
  const pr = await send.github(secret!, 'pull_request', await send.fixture('github-pull_request.json'), 'gh-d-1');
  await expectMade(await deliver(url, pr), {
    provider: 'github',
    kind: 'pull_request.opened',
    title: 'octo-org/hello-world#42: Fix the flaky retry test (opened by alice)',
    actor: 'alice',
    deliveryId: 'gh-d-1',
  });
  const issue = await send.github(secret!, 'issues', await send.fixture('github-issues.json'));
  await expectMade(await deliver(url, issue), {
    provider: 'github',
    kind: 'issues.labeled',
    title: 'octo-org/hello-world#7: Agents should pick this up (labeled by bob)',
    actor: 'bob',
  });
  const comment = await send.github(secret!, 'issue_comment', await send.fixture('github-issue_comment.json'));
  const { event: ev } = await expectMade(await deliver(url, comment), {
    provider: 'github',
    kind: 'issue_comment.created',
    title: 'octo-org/hello-world#7: comment on Agents should pick this up (by dave)',
    actor: 'dave',
  });
  assert.equal(ev.headers['x-github-event'], 'issue_comment');
  assert.deepEqual(ev.payload, JSON.parse(comment.raw), 'the payload is kept as sent');
});

test('GitHub: a wrong secret, a tampered body or no signature is 401 and writes nothing', async () => {
  const { url, secret } = await makeWebhook('github');
  const raw = await send.fixture('github-pull_request.json');
  await expectRefused(url, await send.github('whsec_not-the-secret', 'pull_request', raw), 'bad_signature');
  await expectRefused(url, tamper(await send.github(secret!, 'pull_request', raw)), 'bad_signature');
  const unsigned = await send.github(secret!, 'pull_request', raw);
  delete unsigned.headers['x-hub-signature-256'];
  await expectRefused(url, unsigned, 'missing_signature');
  const malformed = await send.github(secret!, 'pull_request', raw);
  malformed.headers['x-hub-signature-256'] = 'sha1=abc';
  await expectRefused(url, malformed, 'malformed_signature');
});

test('Gitea and Forgejo: bare hex HMAC-SHA256 of the body in X-Gitea-Signature / X-Forgejo-Signature', async () => {
  const { url, secret } = await makeWebhook('gitea');
  const raw = await send.fixture('github-issues.json');
  await expectMade(await deliver(url, send.gitea(secret!, 'issues', raw, false, 'gitea-1')), {
    provider: 'gitea',
    kind: 'issues.labeled',
    title: 'octo-org/hello-world#7: Agents should pick this up (labeled by bob)',
    actor: 'bob',
    deliveryId: 'gitea-1',
  });
  await expectMade(await deliver(url, send.gitea(secret!, 'issues', raw, true, 'forgejo-1')), {
    provider: 'gitea',
    kind: 'issues.labeled',
    title: 'octo-org/hello-world#7: Agents should pick this up (labeled by bob)',
    actor: 'bob',
    deliveryId: 'forgejo-1',
  });
  await expectRefused(url, send.gitea('wrong-secret-wrong-secret', 'issues', raw), 'bad_signature');
  await expectRefused(url, tamper(send.gitea(secret!, 'issues', raw)), 'bad_signature');
});

test('GitLab: the X-Gitlab-Token secret; a failed pipeline becomes pipeline.failed with its project and user', async () => {
  const { url, secret } = await makeWebhook('gitlab');
  const raw = await send.fixture('gitlab-pipeline.json');
  await expectMade(await deliver(url, send.gitlab(secret!, 'Pipeline Hook', raw, 'uuid-31')), {
    provider: 'gitlab',
    kind: 'pipeline.failed',
    title: 'group/infra: pipeline #31 failed on main by erin',
    actor: 'erin',
    deliveryId: 'uuid-31',
  });
  await expectRefused(url, send.gitlab('not-the-token-at-all', 'Pipeline Hook', raw), 'bad_signature');
});

test('Stripe: a provider-issued secret set afterwards; signed by stripe.webhooks.generateTestHeaderString', async () => {
  const made = await makeWebhook('stripe');
  const issued = 'whsec_stripeIssuedSecret0123456789abcdef';
  const set = await h.post(`/api/v1/webhooks/${made.webhook.id}/secret`, {
    token: member.token,
    body: { secret: issued },
  });
  expectStatus(set, 200);
  assert.equal(set.body.secret, undefined, 'a secret the caller gave is not echoed');
  const raw = await send.fixture('stripe-event.json');
  await expectMade(await deliver(made.url, send.stripeSigned(issued, raw)), {
    provider: 'stripe',
    kind: 'charge.dispute.created',
    title: 'Stripe: charge.dispute.created du_1QabcXYZ0123456789abcd',
    actor: null,
    deliveryId: 'evt_1QabcDEFghiJKLmn0pQrStuV',
  });
  const stale = Math.floor(Date.now() / 1000) - 600;
  const otherEvent = raw.replace('evt_1Qabc', 'evt_2Qabc');
  await expectRefused(made.url, send.stripeSigned(issued, otherEvent, stale), 'stale_timestamp');
  await expectRefused(made.url, tamper(send.stripeSigned(issued, otherEvent)), 'bad_signature');
  await expectRefused(made.url, send.stripeSigned('whsec_somebodyElsesSecret000000', otherEvent), 'bad_signature');
});

test('Stripe: several v1 signatures verify when any one matches', async () => {
  const made = await makeWebhook('stripe');
  const raw = (await send.fixture('stripe-event.json')).replace('evt_1Qabc', 'evt_3Qabc');
  const signed = send.stripeSigned(made.secret!, raw);
  signed.headers['stripe-signature'] = signed.headers['stripe-signature']!.replace(/v1=/, `v1=${'0'.repeat(64)},v1=`);
  expectStatus(await deliver(made.url, signed), 201);
});

test('Slack: an event_callback signed v0 becomes a todo; the url_verification challenge is answered', async () => {
  const { url, secret } = await makeWebhook('slack');
  const challenge = JSON.stringify({
    token: 'x',
    challenge: 'c-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
    type: 'url_verification',
  });
  const before = await snapshot(h.pool);
  const answer = await deliver(url, send.slack(secret!, challenge));
  expectStatus(answer, 200);
  assert.deepEqual(answer.body, { challenge: 'c-3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  assert.deepEqual(await snapshot(h.pool), before, 'the handshake writes nothing');

  const raw = await send.fixture('slack-event_callback.json');
  await expectMade(await deliver(url, send.slack(secret!, raw)), {
    provider: 'slack',
    kind: 'app_mention',
    title: 'Slack: app_mention in C0LAN2Q65 from U0LAN0Z89: <@U0LAJ1234> can you look at the failing deploy?',
    actor: 'U0LAN0Z89',
    deliveryId: 'Ev0PV52K25',
  });
  const old = Math.floor(Date.now() / 1000) - 301;
  await expectRefused(
    url,
    send.slack(secret!, raw.replace('Ev0PV52K25', 'Ev0PV52K26'), 'application/json', old),
    'stale_timestamp',
  );
  await expectRefused(url, tamper(send.slack(secret!, raw)), 'bad_signature');
});

test('Slack: a form-encoded slash command is read as a form and becomes a slash_command todo', async () => {
  const { url, secret } = await makeWebhook('slack');
  const form = new URLSearchParams({
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    team_id: 'T0001',
    channel_id: 'C2147483705',
    user_id: 'U2147483697',
    user_name: 'Steve',
    command: '/deploy',
    text: 'api to production',
    response_url: 'https://hooks.slack.com/commands/1234/5678',
    trigger_id: '13345224609.738474920.8088930838d88f008e0',
  }).toString();
  const { event: ev } = await expectMade(
    await deliver(url, send.slack(secret!, form, 'application/x-www-form-urlencoded')),
    {
      provider: 'slack',
      kind: 'slash_command',
      title: 'Slack: /deploy api to production (by Steve)',
      actor: 'U2147483697',
    },
  );
  assert.equal(ev.content_type, 'application/x-www-form-urlencoded');
  assert.equal((ev.payload as Record<string, string>).command, '/deploy');
});

test('Standard Webhooks: signed by the standardwebhooks library, whsec_ secret, several signatures', async () => {
  const { url, secret } = await makeWebhook('standard');
  const raw = JSON.stringify({ type: 'invoice.paid', timestamp: '2026-12-05T10:00:00Z', data: { id: 'inv_123' } });
  const signed = send.standard(secret!, raw, new Date(), 'msg_abc');
  signed.headers['webhook-signature'] =
    `v1,${Buffer.alloc(32).toString('base64')} ${signed.headers['webhook-signature']}`;
  await expectMade(await deliver(url, signed), {
    provider: 'standard',
    kind: 'invoice.paid',
    title: 'invoice.paid inv_123',
    actor: null,
    deliveryId: 'msg_abc',
  });
  const other = raw.replace('inv_123', 'inv_124');
  await expectRefused(url, send.standard(secret!, other, new Date(Date.now() - 10 * 60_000)), 'stale_timestamp');
  await expectRefused(url, tamper(send.standard(secret!, other)), 'bad_signature');
  await expectRefused(url, send.standard(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, other), 'bad_signature');
});

test('a redelivery answers duplicate with the first todo and event, even after that todo was finished', async () => {
  const { url, secret } = await makeWebhook('github');
  const raw = await send.fixture('github-pull_request.json');
  const first = await deliver(url, await send.github(secret!, 'pull_request', raw, 'redeliver-1'));
  expectStatus(first, 201);
  const again = await deliver(url, await send.github(secret!, 'pull_request', raw, 'redeliver-1'));
  expectStatus(again, 200);
  assert.equal(again.body.duplicate, true);
  assert.equal(again.body.created, false);
  assert.equal(again.body.event_id, first.body.event_id);
  assert.deepEqual(again.body.todos, [{ id: first.body.todos[0].id, queue: 'inbox', created: false }]);
  expectStatus(await h.post(`/api/v1/todos/${first.body.todos[0].id}/cancel`, { token: member.token }), 200);
  const late = await deliver(url, await send.github(secret!, 'pull_request', raw, 'redeliver-1'));
  expectStatus(late, 200);
  assert.equal(late.body.duplicate, true);
  const events = await h.pool.query('SELECT count(*)::int AS n FROM webhook_events WHERE delivery_id = $1', [
    'redeliver-1',
  ]);
  assert.equal(events.rows[0].n, 1);
});

test('a provider that sends no delivery id is deduplicated by the body hash', async () => {
  const { url, secret } = await makeWebhook('slack');
  const form = new URLSearchParams({ command: '/ping', text: 'once', user_id: 'U1', trigger_id: 't-1' }).toString();
  expectStatus(await deliver(url, send.slack(secret!, form, 'application/x-www-form-urlencoded')), 201);
  const again = await deliver(url, send.slack(secret!, form, 'application/x-www-form-urlencoded'));
  expectStatus(again, 200);
  assert.equal(again.body.duplicate, true);
});

test('a body that is not JSON or a form is refused naming the body; an unknown URL is 404', async () => {
  const { url, secret } = await makeWebhook('github');
  const signed = await send.github(secret!, 'ping', 'hello');
  signed.headers['content-type'] = 'text/plain';
  expectError(await deliver(url, signed), 400, 'invalid_argument', 'body');
  const broken = await send.github(secret!, 'ping', '{"zen":');
  expectError(await deliver(url, broken), 400, 'invalid_argument', 'body');
  expectError(
    await h.post('/webhooks/sbw_unknown', { payload: '{}', headers: { 'content-type': 'application/json' } }),
    404,
    'not_found',
  );
});

test('a signed body over a todo’s 256 KiB payload is refused naming payload, and nothing is written', async () => {
  const { url, secret } = await makeWebhook('github');
  const raw = JSON.stringify({ action: 'opened', filler: 'x'.repeat(300 * 1024), repository: { full_name: 'o/r' } });
  const before = await snapshot(h.pool);
  const res = await deliver(url, await send.github(secret!, 'issues', raw));
  expectError(res, 400, 'invalid_argument', 'payload');
  assert.deepEqual(await snapshot(h.pool), before);
});
