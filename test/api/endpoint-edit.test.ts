// Pins PATCH /api/v1/endpoints/{ref} beyond accept_agent_messages: the display name, the
// default lease (null: the server's) and granted queues added, the slug never changing;
// 16 edits adding queues at once all land; the 50-queue cap holds under the same race;
// a queue added is claimable at once through a session whose answer was being reused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, vend } from './app.js';

const h = await apiHarness('api_endpoint_edit');
const { member } = await makePeople(h);

test('name, default lease and added queues change; the slug and the credential do not', async () => {
  const vended = await vend(h, member, { queues: ['inbox'] });
  const url = `/api/v1/endpoints/${vended.endpoint.slug}`;
  const edited = await h.request('PATCH', url, {
    token: member.token,
    body: { name: 'Night shift', default_lease_seconds: 900, add_queues: ['prs', 'inbox', 'prs', 'ci'] },
  });
  expectStatus(edited, 200, 'edit');
  assert.equal(edited.body.endpoint.slug, vended.endpoint.slug);
  assert.equal(edited.body.endpoint.name, 'Night shift');
  assert.equal(edited.body.endpoint.default_lease_seconds, 900);
  assert.deepEqual(edited.body.endpoint.queues, ['inbox', 'prs', 'ci'], 'appended in order, each once');
  const cleared = await h.request('PATCH', url, { token: member.token, body: { default_lease_seconds: null } });
  assert.equal(cleared.body.endpoint.default_lease_seconds, null);
  assert.equal(cleared.body.endpoint.name, 'Night shift', 'what is not named stays');
  // The credential still works, and a todo can go to the new queue.
  const pushed = await h.post(`${url}/todos`, { token: member.token, body: { queue: 'ci', title: 'on ci' } });
  expectStatus(pushed, 201, 'push to an added queue');
});

test('16 edits adding queues at once all land; the cap of 50 holds under the same race', async () => {
  const vended = await vend(h, member, { queues: ['inbox'] });
  const url = `/api/v1/endpoints/${vended.endpoint.slug}`;
  const replies = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      h.request('PATCH', url, { token: member.token, body: { add_queues: [`q${i}`] } }),
    ),
  );
  for (const r of replies) expectStatus(r, 200, 'concurrent add');
  const shown = await h.get(url, { token: member.token });
  assert.deepEqual(
    [...(shown.body.endpoint.queues as string[])].sort(),
    ['inbox', ...Array.from({ length: 16 }, (_, i) => `q${i}`)].sort(),
  );

  // 17 queues now; 20 racing edits of two queues each: at most 16 of them fit under 50.
  const racing = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      h.request('PATCH', url, { token: member.token, body: { add_queues: [`r${i}a`, `r${i}b`] } }),
    ),
  );
  const ok = racing.filter((r) => r.status === 200).length;
  for (const r of racing.filter((x) => x.status !== 200)) expectError(r, 400, 'invalid_argument', 'add_queues');
  const after = (await h.get(url, { token: member.token })).body.endpoint.queues as string[];
  assert.equal(after.length, 17 + 2 * ok);
  assert.ok(after.length <= 50, `${after.length} queues`);
  assert.equal(ok, 16);
});

test('a queue added is claimable at once by a session whose credential answer was being reused', async () => {
  const vended = await vend(h, member, { queues: ['inbox'] });
  const sessionId = 'ms_EDITCACHED00000000000000';
  await h.pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, client_name, client_version, instance) VALUES ($1, $2, 'c', '1', 'i')`,
    [vended.endpoint.id, sessionId],
  );
  const { credentials } = h.services;
  assert.deepEqual((await credentials.find(vended.credential, sessionId))?.endpoint.queues, ['inbox']);
  const edited = await h.request('PATCH', `/api/v1/endpoints/${vended.endpoint.id}`, {
    token: member.token,
    body: { add_queues: ['later'] },
  });
  expectStatus(edited, 200, 'edit');
  assert.deepEqual((await credentials.find(vended.credential, sessionId))?.endpoint.queues, ['inbox', 'later']);
});
