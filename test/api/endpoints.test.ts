// Pins the endpoint routes: vend (shape, defaults, verb families), list, show, revoke with dead-lettering, delete, expiry.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { VERB_FAMILIES, basicVerbs } from '../../src/domain/verbs.js';
import { endpointExpirySweep } from '../../src/sweeps/endpoints.js';
import { claim, complete, type Agent } from '../../src/todos/index.js';
import { depsOf } from '../helpers/fixtures.js';
import {
  apiHarness,
  expectError,
  expectStatus,
  makePeople,
  push,
  tableCounts,
  vend,
  DEFAULT_LEASE_SECONDS,
  PUBLIC_URL,
  idsOf,
  byId,
} from './app.js';

const h = await apiHarness('api_endpoints');
const { member, other } = await makePeople(h);
const deps = depsOf(h.pool, DEFAULT_LEASE_SECONDS);
beforeEach(() => h.fresh());

const ENDPOINT_KEYS = [
  'accept_agent_messages',
  'created_at',
  'credential_prefix',
  'default_lease_seconds',
  'expires_at',
  'id',
  'last_seen_at',
  'name',
  'queues',
  'revoked_at',
  'slug',
  'state',
  'verbs',
];

function agent(endpoint: { id: string; queues: string[] }, sessionId = 'session-1'): Agent {
  return { endpointId: endpoint.id, sessionId, queues: endpoint.queues, defaultLeaseSeconds: null };
}

async function todoRows(endpointId: string) {
  return (
    await h.pool.query<{ id: string; state: string; error: string | null }>(
      'SELECT id, state, error FROM todos WHERE endpoint_id = $1 ORDER BY id',
      [endpointId],
    )
  ).rows;
}

test('vend answers 201 with the endpoint, a credential shown once and ready client configuration', async () => {
  const res = await h.post('/api/v1/endpoints', { token: member.token, body: { name: 'Build Bot!' } });
  expectStatus(res, 201);
  const { endpoint, credential, mcp_json, claude_mcp_add } = res.body as {
    endpoint: { id: string; slug: string; name: string; state: string; credential_prefix: string } & Record<
      string,
      unknown
    >;
    credential: string;
    mcp_json: unknown;
    claude_mcp_add: string;
  };
  assert.deepEqual(Object.keys(res.body).sort(), ['claude_mcp_add', 'credential', 'endpoint', 'guidance', 'mcp_json']);
  assert.deepEqual(Object.keys(endpoint).sort(), ENDPOINT_KEYS);
  assert.match(endpoint.id, /^ep_/);
  assert.match(endpoint.slug, /^build-bot-[a-z0-9]{8}$/);
  assert.equal(endpoint.name, 'Build Bot!');
  assert.equal(endpoint.state, 'active');
  assert.equal(endpoint.revoked_at, null);
  assert.equal(endpoint.expires_at, null);
  assert.match(credential, /^sbk_[A-Za-z0-9_-]{43}$/);
  assert.ok(credential.startsWith(String(endpoint.credential_prefix).replace('…', '')));
  const url = `${PUBLIC_URL}/mcp`;
  assert.deepEqual(mcp_json, {
    mcpServers: { [endpoint.slug]: { type: 'http', url, headers: { Authorization: `Bearer ${credential}` } } },
  });
  assert.ok(claude_mcp_add.startsWith('claude mcp add --transport http '), claude_mcp_add);
  assert.ok(claude_mcp_add.includes(` ${endpoint.slug} `), claude_mcp_add);
  assert.ok(claude_mcp_add.includes(url), claude_mcp_add);
  assert.ok(claude_mcp_add.includes(credential), claude_mcp_add);
  const { guidance } = res.body as { guidance: Record<string, unknown> & { claude_code: Record<string, string> } };
  assert.equal(guidance.server_name, endpoint.slug, 'the guidance names the server the config registered');
  assert.equal(guidance.claude_code.channel_flag, `--dangerously-load-development-channels server:${endpoint.slug}`);
  assert.equal(guidance.claude_code.allowed_tools, `mcp__${endpoint.slug}`);
  assert.equal(guidance.troubleshooting_url, `${PUBLIC_URL}/docs/doorbell`);
  assert.ok(!JSON.stringify(guidance).includes(credential), 'the guidance carries no credential');

  const shown = await h.get(`/api/v1/endpoints/${endpoint.slug}`, { token: member.token });
  assert.ok(!shown.text.includes(credential), 'the credential is shown once');
  const stored = await h.pool.query('SELECT human_id, credential_hash FROM endpoints WHERE id = $1', [endpoint.id]);
  assert.equal(stored.rows[0].human_id, member.human.id);
  assert.ok(!(stored.rows[0].credential_hash as Buffer).toString('utf8').includes(credential), 'only a hash is stored');
});

test('vend defaults to the inbox queue and the basic verbs, without the admission family', async () => {
  const { endpoint } = await vend(h, member, { name: 'defaults' });
  assert.deepEqual(endpoint.queues, ['inbox']);
  assert.deepEqual(endpoint.verbs, [...basicVerbs()].sort());
  for (const verb of VERB_FAMILIES.admission) assert.ok(!endpoint.verbs.includes(verb), verb);
  for (const verb of VERB_FAMILIES.hooks) assert.ok(!endpoint.verbs.includes(verb), verb);
  assert.equal(endpoint.default_lease_seconds, null);
  assert.equal(endpoint.accept_agent_messages, false, 'agent messages from other endpoints are opt-in');
});

test('accept_agent_messages is set at vend and by PATCH, by the owner only; a bad or empty body is refused naming it', async () => {
  const { endpoint } = await vend(h, member, { name: 'open to agents', accept_agent_messages: true });
  assert.equal(endpoint.accept_agent_messages, true);
  const url = `/api/v1/endpoints/${endpoint.slug}`;
  const off = await h.request('PATCH', url, { token: member.token, body: { accept_agent_messages: false } });
  expectStatus(off, 200);
  assert.equal(off.body.endpoint.accept_agent_messages, false);
  assert.deepEqual(Object.keys(off.body.endpoint).sort(), ENDPOINT_KEYS);
  assert.equal((await h.get(url, { token: member.token })).body.endpoint.accept_agent_messages, false);
  const on = await h.request('PATCH', `/api/v1/endpoints/${endpoint.id}`, {
    token: member.token,
    body: { accept_agent_messages: true },
  });
  expectStatus(on, 200);
  assert.equal(on.body.endpoint.accept_agent_messages, true);

  const foreign = await h.request('PATCH', url, { token: other.token, body: { accept_agent_messages: false } });
  expectError(foreign, 404, 'not_found');
  const bad = [
    [{ accept_agent_messages: 'yes' }, 'accept_agent_messages'],
    [{ name: '' }, 'name'],
    [{ slug: 'renamed' }, undefined],
    [{ add_queues: ['Bad Queue'] }, 'add_queues.0'],
    [{ default_lease_seconds: 1 }, 'default_lease_seconds'],
    [{}, 'body'],
  ] as const;
  for (const [body, field] of bad) {
    expectError(await h.request('PATCH', url, { token: member.token, body }), 400, 'invalid_argument', field);
  }
  assert.equal((await h.get(url, { token: member.token })).body.endpoint.accept_agent_messages, true);
  expectStatus(await h.post(`${url}/revoke`, { token: member.token }), 200);
  const revoked = await h.request('PATCH', url, { token: member.token, body: { accept_agent_messages: false } });
  expectError(revoked, 409, 'conflict');
});

test('vend expands verb families, keeps single verbs and de-duplicates queues', async () => {
  const { endpoint } = await vend(h, member, {
    name: 'families',
    queues: ['builds', 'inbox', 'builds'],
    verbs: ['admission', 'claim', 'create', 'create_todo'],
    default_lease_seconds: 60,
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
  });
  assert.deepEqual(endpoint.queues, ['builds', 'inbox']);
  assert.deepEqual(endpoint.verbs, ['claim', 'clear_admission_policy', 'create_todo', 'set_admission_policy']);
  assert.equal(endpoint.default_lease_seconds, 60);
  assert.equal(endpoint.state, 'active');
  assert.ok(endpoint.expires_at);
});

test('vend refuses an unknown verb with 400 naming verbs and the verb, and vends nothing', async () => {
  const before = await tableCounts(h.pool);
  for (const verb of ['launch_missiles', 'whoami', 'Claim']) {
    const res = await h.post('/api/v1/endpoints', { token: member.token, body: { name: 'x', verbs: ['claim', verb] } });
    expectError(res, 400, 'invalid_argument', 'verbs', verb);
    assert.ok(String(res.body.error.message).includes(`"${verb}"`), res.body.error.message);
  }
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('vend refuses names inherited by every JS object (constructor, toString, __proto__) as unknown verbs', async () => {
  const before = await tableCounts(h.pool);
  const answers: string[] = [];
  for (const verb of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const res = await h.post('/api/v1/endpoints', { token: member.token, body: { name: 'x', verbs: [verb] } });
    answers.push(
      `${verb} → ${res.status} ${res.body?.error?.code ?? ''} ${res.body?.error?.details?.field ?? ''}`.trim(),
    );
  }
  assert.deepEqual(answers, [
    'constructor → 400 invalid_argument verbs',
    'toString → 400 invalid_argument verbs',
    '__proto__ → 400 invalid_argument verbs',
    'hasOwnProperty → 400 invalid_argument verbs',
  ]);
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('vend refuses bad names, queues, leases and past expiries, naming the field', async () => {
  const before = await tableCounts(h.pool);
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(81) }, 'name'],
    [{ name: 'x', queues: [] }, 'queues'],
    [{ name: 'x', queues: ['Bad Queue'] }, 'queues.0'],
    [{ name: 'x', default_lease_seconds: 1 }, 'default_lease_seconds'],
    [{ name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'x', expires_at: new Date(Date.now() - 60_000).toISOString() }, 'expires_at'],
  ];
  for (const [body, field] of cases) {
    const res = await h.post('/api/v1/endpoints', { token: member.token, body });
    expectError(res, 400, 'invalid_argument', field, JSON.stringify(body));
  }
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('list answers only the caller’s endpoints, oldest first, without credentials', async () => {
  const mine = [await vend(h, other, { name: 'first' }), await vend(h, other, { name: 'second' })];
  await vend(h, member, { name: 'not theirs' });
  const res = await h.get('/api/v1/endpoints', { token: other.token });
  expectStatus(res, 200);
  assert.deepEqual(Object.keys(res.body), ['endpoints']);
  const ids = idsOf(res.body.endpoints);
  assert.deepEqual(
    ids.filter((id) => mine.some((m) => m.endpoint.id === id)),
    mine.map((m) => m.endpoint.id),
  );
  const owners = await h.pool.query<{ human_id: string }>(
    'SELECT DISTINCT human_id FROM endpoints WHERE id = ANY($1)',
    [ids],
  );
  assert.deepEqual(
    owners.rows.map((r) => r.human_id),
    [other.human.id],
  );
  for (const e of res.body.endpoints) assert.deepEqual(Object.keys(e).sort(), ENDPOINT_KEYS);
  for (const m of mine) assert.ok(!res.text.includes(m.credential));
});

test('show answers the endpoint and its sessions (none before any agent connects), by slug and by id', async () => {
  const vended = await vend(h, member, { name: 'shown' });
  for (const ref of [vended.endpoint.slug, vended.endpoint.id]) {
    const res = await h.get(`/api/v1/endpoints/${ref}`, { token: member.token });
    expectStatus(res, 200, ref);
    const { guidance } = vended as typeof vended & { guidance: unknown };
    assert.deepEqual(res.body, { endpoint: vended.endpoint, sessions: [], guidance }, 'the same guidance as vend');
  }
});

test('revoke dead-letters live todos, closes the open attempt as revoked and leaves finished ones alone', async () => {
  const { endpoint } = await vend(h, member, { name: 'doomed' });
  const pending = await push(h, member, endpoint.slug, { title: 'pending' });
  const claimed = await push(h, member, endpoint.slug, { title: 'claimed' });
  const finished = await push(h, member, endpoint.slug, { title: 'done' });
  await claim(deps, agent(endpoint), { id: claimed.id });
  await claim(deps, agent(endpoint), { id: finished.id });
  await complete(deps, agent(endpoint), { id: finished.id });

  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/revoke`, { token: member.token });
  expectStatus(res, 200);
  assert.equal(res.body.dead_lettered, 2);
  assert.equal(res.body.endpoint.state, 'revoked');
  assert.ok(res.body.endpoint.revoked_at);

  assert.deepEqual(await todoRows(endpoint.id), [
    { id: pending.id, state: 'failed', error: 'endpoint_revoked' },
    { id: claimed.id, state: 'failed', error: 'endpoint_revoked' },
    { id: finished.id, state: 'done', error: null },
  ]);
  const shown = await h.get(`/api/v1/todos/${claimed.id}`, { token: member.token });
  expectStatus(shown, 200);
  assert.equal(shown.body.attempts.length, 1);
  assert.equal(shown.body.attempts[0].outcome, 'revoked');
  assert.ok(shown.body.attempts[0].ended_at);
  assert.equal(shown.body.todo.lease_expires_at, null);

  const again = await h.post(`/api/v1/endpoints/${endpoint.id}/revoke`, { token: member.token });
  expectStatus(again, 200);
  assert.equal(again.body.dead_lettered, 0);
  assert.equal(again.body.endpoint.revoked_at, res.body.endpoint.revoked_at);
});

test('a revoked endpoint takes no new todos: push answers 409', async () => {
  const { endpoint } = await vend(h, member, { name: 'closed' });
  expectStatus(await h.post(`/api/v1/endpoints/${endpoint.slug}/revoke`, { token: member.token }), 200);
  const before = await tableCounts(h.pool);
  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/todos`, {
    token: member.token,
    body: { queue: 'inbox', title: 'too late' },
  });
  expectError(res, 409, 'conflict');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('delete answers 409 while the endpoint is live and removes it, with its todos, once revoked', async () => {
  const { endpoint } = await vend(h, member, { name: 'deleted' });
  const todo = await push(h, member, endpoint.slug);
  const hook = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox' },
  });
  expectStatus(hook, 201);
  // An attempt of the todo's history: deleting the endpoint deletes it with the todo.
  await h.pool.query(
    `INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, lease_expires_at, ended_at, outcome)
     VALUES ($1, $2, 1, 1, now(), now(), 'released')`,
    [endpoint.id, todo.id],
  );

  const before = await tableCounts(h.pool);
  const early = await h.delete(`/api/v1/endpoints/${endpoint.slug}`, { token: member.token });
  expectError(early, 409, 'conflict');
  assert.deepEqual(await tableCounts(h.pool), before);

  expectStatus(await h.post(`/api/v1/endpoints/${endpoint.slug}/revoke`, { token: member.token }), 200);
  const res = await h.delete(`/api/v1/endpoints/${endpoint.id}`, { token: member.token });
  expectStatus(res, 200);
  assert.deepEqual(res.body, { deleted: true });
  expectError(await h.get(`/api/v1/endpoints/${endpoint.slug}`, { token: member.token }), 404, 'not_found');
  expectError(await h.get(`/api/v1/todos/${todo.id}`, { token: member.token }), 404, 'not_found');
  const left = await h.pool.query(
    `SELECT (SELECT count(*) FROM todos WHERE endpoint_id = $1)::int AS todos,
            (SELECT count(*) FROM todo_attempts WHERE endpoint_id = $1)::int AS attempts`,
    [endpoint.id],
  );
  assert.deepEqual(left.rows[0], { todos: 0, attempts: 0 });
  expectError(await h.delete(`/api/v1/endpoints/${endpoint.id}`, { token: member.token }), 404, 'not_found');
});

test('an endpoint past its expiry shows expired, takes no todos, and the sweep dead-letters its work', async () => {
  const { endpoint } = await vend(h, member, {
    name: 'expiring',
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const pending = await push(h, member, endpoint.slug, { title: 'pending' });
  const claimed = await push(h, member, endpoint.slug, { title: 'claimed' });
  await claim(deps, agent(endpoint), { id: claimed.id });
  await h.pool.query(`UPDATE endpoints SET expires_at = now() - interval '1 minute' WHERE id = $1`, [endpoint.id]);

  const expired = await h.get(`/api/v1/endpoints/${endpoint.slug}`, { token: member.token });
  expectStatus(expired, 200);
  assert.equal(expired.body.endpoint.state, 'expired');
  const refused = await h.post(`/api/v1/endpoints/${endpoint.slug}/todos`, {
    token: member.token,
    body: { queue: 'inbox', title: 'too late' },
  });
  expectError(refused, 409, 'conflict');

  const result = await endpointExpirySweep(h.pool, 1000).run();
  assert.ok(result && (result as { expired: number }).expired >= 1, JSON.stringify(result));
  const swept = await h.get(`/api/v1/endpoints/${endpoint.id}`, { token: member.token });
  assert.equal(swept.body.endpoint.state, 'expired');
  assert.ok(swept.body.endpoint.revoked_at);
  assert.deepEqual(await todoRows(endpoint.id), [
    { id: pending.id, state: 'failed', error: 'endpoint_revoked' },
    { id: claimed.id, state: 'failed', error: 'endpoint_revoked' },
  ]);
  const attempt = await h.get(`/api/v1/todos/${claimed.id}`, { token: member.token });
  assert.equal(attempt.body.attempts[0].outcome, 'revoked');

  const listed = await h.get('/api/v1/endpoints', { token: member.token });
  const row = byId(listed.body.endpoints, endpoint.id);
  assert.equal(row.state, 'expired');
  expectStatus(await h.delete(`/api/v1/endpoints/${endpoint.slug}`, { token: member.token }), 200);
});
