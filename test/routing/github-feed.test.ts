// A GitHub repository's feed through routing rules (docs/design/routing.md), signed by
// GitHub's own library: pushes and bots are dropped, pull requests fan out to a reviewer
// and a tester once per head sha, maintainers' comments reach the triager, a stranger's
// comment is quarantined. Before each delivery the dry run is asked what it will do, and
// the delivery then does exactly that.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, vend, PUBLIC_URL, type Reply } from '../api/app.js';
import * as send from '../webhooks/senders.js';

const h = await apiHarness('routing_github');
const { member, other } = await makePeople(h);
const triage = (await vend(h, member, { name: 'triage', queues: ['inbox'] })).endpoint;
const reviewer = (await vend(h, member, { name: 'reviewer', queues: ['review'] })).endpoint;
const tester = (await vend(h, member, { name: 'tester', queues: ['review', 'tests'] })).endpoint;
const foreign = (await vend(h, other, { name: 'foreign', queues: ['review'] })).endpoint;

const made = await h.post(`/api/v1/endpoints/${triage.slug}/webhooks`, {
  token: member.token,
  body: { queue: 'inbox', provider: 'github', name: 'hello-world' },
});
expectStatus(made, 201);
const webhook = {
  id: made.body.webhook.id as string,
  url: made.body.url as string,
  secret: made.body.secret as string,
};

const RULES = [
  { name: 'drop pushes', when: 'event.type == "push"', then: { action: 'drop', reason: 'pushes need no agent' } },
  {
    name: 'drop bots',
    when: 'event.actor.endsWith("[bot]") || payload.?sender.type.orValue("") == "Bot"',
    then: { action: 'drop' },
  },
  {
    name: 'review pull requests',
    when: 'event.type in ["pull_request.opened", "pull_request.synchronize"]',
    then: {
      action: 'route',
      endpoints: [reviewer.slug, tester.slug],
      queue: 'review',
      title: 'Review #{{ payload.number }} at {{ payload.pull_request.head.sha.substring(0, 7) }}',
      kind: 'review',
      priority: 'event.type == "pull_request.opened" ? 10 : 5',
      once: '"pr-" + string(int(payload.number)) + "-" + payload.pull_request.head.sha',
    },
  },
  {
    name: 'comments',
    when: 'event.type == "issue_comment.created"',
    then: { action: 'route', title: '{{ event.actor }} on #{{ payload.issue.number }}: {{ payload.comment.body }}' },
  },
];

function deliver(signed: send.Signed): Promise<Reply> {
  return h.post(webhook.url.slice(PUBLIC_URL.length), { payload: signed.raw, headers: signed.headers });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures are edited field by field
type Json = Record<string, any>;

interface Made {
  disposition: string;
  event_id: string;
  reason?: string;
  todos: { id: string; endpoint?: string }[];
}
interface Predicted {
  event_id: string | null;
  action: string;
  todos: { endpoint: string | null; queue: string; title: string }[];
}
type Step = { step: string } & Json;

function variant(raw: string, edit: (body: Json) => void): string {
  const body = JSON.parse(raw) as Json;
  edit(body);
  return JSON.stringify(body, null, 2);
}

test('rules save compiled; a compile error names the rule, the field and the position', async () => {
  const bad = await h.put(`/api/v1/webhooks/${webhook.id}/rules`, {
    token: member.token,
    body: { rules: [RULES[0], { name: 'broken', when: 'event.type == ', then: { action: 'drop' } }] },
  });
  expectError(bad, 400, 'invalid_argument', 'rules[1].when');
  assert.match(bad.body.error.message, /position 14/);
  const typed = await h.put(`/api/v1/webhooks/${webhook.id}/rules`, {
    token: member.token,
    body: { rules: [{ name: 'not a bool', when: 'event.type', then: { action: 'drop' } }] },
  });
  expectError(typed, 400, 'invalid_argument', 'rules[0].when');
  assert.match(typed.body.error.message, /must be bool, not string/);
  const template = await h.put(`/api/v1/webhooks/${webhook.id}/rules`, {
    token: member.token,
    body: { rules: [{ name: 't', when: 'true', then: { action: 'route', title: 'x {{ payload. }}' } }] },
  });
  expectError(template, 400, 'invalid_argument', 'rules[0].then.title');
  const stranger = await h.put(`/api/v1/webhooks/${webhook.id}/rules`, {
    token: member.token,
    body: {
      rules: [{ name: 'f', when: 'true', then: { action: 'route', endpoints: [foreign.slug], queue: 'review' } }],
    },
  });
  expectError(stranger, 400, 'invalid_argument', 'rules[0].then.endpoints[0]');
  const ungranted = await h.put(`/api/v1/webhooks/${webhook.id}/rules`, {
    token: member.token,
    body: {
      rules: [{ name: 'q', when: 'true', then: { action: 'route', endpoints: [reviewer.slug], queue: 'tests' } }],
    },
  });
  expectError(ungranted, 400, 'invalid_argument', 'rules[0].then.queue');
  const tooMany = await h.put(`/api/v1/webhooks/${webhook.id}/rules`, {
    token: member.token,
    body: { rules: Array.from({ length: 33 }, (_, i) => ({ name: `r${i}`, when: 'false', then: { action: 'drop' } })) },
  });
  expectError(tooMany, 400, 'invalid_argument', 'rules');
  expectError(await h.get(`/api/v1/webhooks/${webhook.id}/rules`, { token: other.token }), 404, 'not_found');
  const unchanged = await h.get(`/api/v1/webhooks/${webhook.id}/rules`, { token: member.token });
  expectStatus(unchanged, 200);
  assert.deepEqual(unchanged.body.rules, [], 'nothing of a refused save was written');
  assert.equal(unchanged.body.default, 'route');
});

test('the feed: the dry run predicts each delivery, and each delivery does what it predicted', async () => {
  const saved = await h.put(`/api/v1/webhooks/${webhook.id}/rules`, {
    token: member.token,
    body: { rules: RULES, default: 'drop' },
  });
  expectStatus(saved, 200);
  assert.equal(saved.body.rules.length, 4);
  assert.ok((saved.body as { rules: { id: string }[] }).rules.every((r) => /^rl_/.test(r.id)));
  const trust = await h.put(`/api/v1/webhooks/${webhook.id}/trusted-actors`, {
    token: member.token,
    body: {
      actors: ['alice'],
      when: 'has(payload.comment) && payload.comment.author_association in ["OWNER", "MEMBER", "COLLABORATOR"]',
    },
  });
  expectStatus(trust, 200);
  assert.equal(trust.body.trusted_actors.enforced, true);

  const pr = await send.fixture('github-pull_request.json');
  const comment = await send.fixture('github-issue_comment.json');
  const sync = variant(pr, (b) => {
    b.action = 'synchronize';
    b.pull_request.head.sha = 'aaaaaaa1111111111111111111111111111111111';
  });
  const feed: { label: string; event: string; raw: string; expect: string }[] = [
    { label: 'push', event: 'push', raw: await send.fixture('github-push.json'), expect: 'dropped' },
    { label: 'pr opened', event: 'pull_request', raw: pr, expect: 'routed' },
    { label: 'pr synchronize', event: 'pull_request', raw: sync, expect: 'routed' },
    { label: 'same head again', event: 'pull_request', raw: sync, expect: 'duplicate' },
    {
      label: 'stranger comment',
      event: 'issue_comment',
      raw: variant(comment, (b) => (b.comment.author_association = 'NONE')),
      expect: 'quarantined',
    },
    {
      label: 'maintainer comment',
      event: 'issue_comment',
      raw: variant(comment, (b) => {
        b.sender = { login: 'carol', id: 77, type: 'User' };
        b.comment.user = b.sender;
        b.comment.author_association = 'MEMBER';
        b.comment.body = 'Looks right, ship it';
      }),
      expect: 'routed',
    },
    {
      label: 'bot comment',
      event: 'issue_comment',
      raw: variant(comment, (b) => (b.sender = { login: 'dependabot[bot]', id: 49699333, type: 'Bot' })),
      expect: 'dropped',
    },
    { label: 'check run', event: 'check_run', raw: await send.fixture('github-check_run.json'), expect: 'dropped' },
  ];
  const outcomes: Record<string, Reply> = {};
  for (const d of feed) {
    const dry = await h.post(`/api/v1/webhooks/${webhook.id}/rules/test`, {
      token: member.token,
      body: { payload: JSON.parse(d.raw), event: { headers: { 'X-GitHub-Event': d.event } } },
    });
    expectStatus(dry, 200, d.label);
    const predicted = (dry.body as { results: Predicted[] }).results[0] as Predicted;
    assert.equal(predicted.action, d.expect, `${d.label}: predicted`);
    const res = await deliver(await send.github(webhook.secret, d.event, d.raw));
    expectStatus(res, d.expect === 'routed' ? 201 : 200, d.label);
    assert.equal(res.body.disposition, d.expect, `${d.label}: delivered`);
    const shown = await h.get(`/api/v1/events/${res.body.event_id}`, { token: member.token });
    assert.equal(shown.body.event.disposition, d.expect, `${d.label}: recorded`);
    // What was made is what was predicted: endpoint, queue and title per todo.
    const answer = res.body as Made;
    const todos = await Promise.all(
      answer.todos.map(async (t) => {
        const row = await h.pool.query<{ slug: string; queue: string; title: string }>(
          'SELECT e.slug, t.queue, t.title FROM todos t JOIN endpoints e ON e.id = t.endpoint_id WHERE t.id = $1',
          [t.id],
        );
        return row.rows[0];
      }),
    );
    const expected = d.expect === 'routed' ? predicted.todos : [];
    assert.deepEqual(
      todos.map((t) => [t?.slug, t?.queue, t?.title]),
      expected.map((t) => [t.endpoint ?? triage.slug, t.queue, t.title]),
      `${d.label}: todos`,
    );
    outcomes[d.label] = res;
  }

  // Fan-out: one todo on each of the reviewer and the tester, in one event.
  const opened = (outcomes['pr opened'] as Reply).body as Made;
  assert.deepEqual(
    opened.todos.map((t) => t.endpoint),
    [reviewer.slug, tester.slug],
  );
  const onReviewer = await h.pool.query<{ title: string; priority: number; kind: string }>(
    'SELECT title, priority, kind FROM todos WHERE id = $1',
    [opened.todos[0]?.id],
  );
  assert.deepEqual(onReviewer.rows[0], { title: 'Review #42 at 6dcb09b', priority: 10, kind: 'review' });
  assert.match((outcomes['same head again'] as Reply).body.reason, /work order "pr-42-aaaaaaa/);

  // The stranger's comment waits in quarantine with the actor and what would have reached the agent.
  const held = await h.get('/api/v1/quarantine', { token: member.token });
  expectStatus(held, 200);
  assert.equal(held.body.items.length, 1);
  const [item] = held.body.items;
  assert.equal(item.actor, 'dave');
  assert.equal(item.event_id, (outcomes['stranger comment'] as Reply).body.event_id);
  assert.match(item.would_make[0].title, /^dave on #7: @switchboard please take this/);
  assert.deepEqual((await h.get('/api/v1/quarantine', { token: other.token })).body.items, []);

  // The trace names the rule, what it decided and the values its expressions produced.
  const event = await h.get(`/api/v1/events/${opened.event_id}`, { token: member.token });
  const trace = (event.body as { event: { trace: Step[] } }).event.trace;
  const decide = trace.find((s) => s.step === 'decide') as Step;
  assert.equal(decide.action, 'route');
  assert.equal(decide.values.priority, 10);
  assert.match(decide.values.once, /^pr-42-6dcb09b/);
  assert.deepEqual(
    trace.filter((s) => s.step === 'route').map((s) => s.endpoint as string),
    [reviewer.slug, tester.slug],
  );

  // The dry run over the last deliveries agrees with what each of them did.
  const replayed = await h.post(`/api/v1/webhooks/${webhook.id}/rules/test`, {
    token: member.token,
    body: { last: feed.length },
  });
  expectStatus(replayed, 200);
  const byEvent = new Map((replayed.body as { results: Predicted[] }).results.map((r) => [r.event_id, r.action]));
  for (const d of feed) {
    const res = outcomes[d.label] as Reply;
    assert.equal(byEvent.get(res.body.event_id), d.expect, `${d.label}: last-N dry run`);
  }
});
