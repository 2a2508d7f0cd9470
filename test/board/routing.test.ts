// Pins the board's quarantine and rules pages (docs/design/routing.md, docs/board.md
// "Quarantine and rules"): a held delivery of an untrusted (here: unnamed) actor is listed
// with its reason and what it would make; releasing it from the board makes the todo, a
// second release is a 409 that says so; discard needs a reason and makes nothing; hostile
// payload and actor text is escaped. The rules page saves valid rules, names rules[0].when
// next to the box on a compile error (keeping what was typed), and the dry run shows a
// routed result with its would-be todo. The trusted-actors form sets the gate, names a bad
// `when` next to its field and clears it. A todo a rule made shows its route in the drawer
// (the event, linked; the rule by name and position; the steps). Another human's item,
// webhook, trust form and todo answer 404.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { setRules, setTrust } from '../../src/routing/manage.js';
import { testDatabase } from '../helpers/db.js';
import { PASSWORD, boardRequest, human, launchBrowser, signedInPage, startBoard } from './harness.js';

const db = await testDatabase('board_routing');
const { url } = await startBoard(db);
const browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

async function person(name: string) {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const { endpoint } = await vendEndpoint(deps, who.id, { name, queues: ['inbox', 'ops'] }, new Date());
  return { who, cookie: `sb_session=${session.cookie}`, csrf: session.csrf, slug: endpoint.slug, id: endpoint.id };
}
type Person = Awaited<ReturnType<typeof person>>;

const get = (p: Person, path: string) => boardRequest(url, 'GET', path, p.cookie);
const post = (p: Person, path: string, form: Record<string, string> = {}) =>
  boardRequest(url, 'POST', path, p.cookie, { ...form, csrf: p.csrf });

const URL_RE = /https?:\/\/[^\s<"]+\/webhooks\/sbw_[A-Za-z0-9_-]+/;

/** A token webhook added from the board's form, with its URL and id. */
async function tokenWebhook(p: Person) {
  const res = await post(p, `/endpoints/${p.slug}/webhooks`, { provider: 'token', queue: 'inbox', name: 'hook' });
  assert.equal(res.status, 201, res.text);
  const rows = await db.pool.query<{ id: string }>(
    'SELECT id FROM webhooks WHERE endpoint_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
    [p.id],
  );
  return { id: rows.rows[0]?.id ?? '', url: URL_RE.exec(res.text)?.[0] ?? '' };
}

async function deliver(hookUrl: string, body: unknown) {
  const res = await fetch(url + new URL(hookUrl).pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { disposition?: string; quarantine_id?: string } };
}

/** A token webhook whose trust gate trusts nobody: every routed delivery is held. */
async function gated(p: Person) {
  const hook = await tokenWebhook(p);
  await setTrust({ db: db.pool }, { humanId: p.who.id }, hook.id, { actors: [] });
  return hook;
}

const todoCount = async (endpointId: string) =>
  (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [endpointId]))
    .rows[0]?.n ?? 0;

test('a held delivery is listed with its reason and what it would make; release makes the todo; a second release is a 409', async () => {
  const me = await person('Gatekeeper');
  const hook = await gated(me);
  const held = await deliver(hook.url, { title: 'deploy the thing', build: 7 });
  assert.equal(held.body.disposition, 'quarantined', JSON.stringify(held.body));
  const id = held.body.quarantine_id ?? '';
  assert.ok(id);

  const webhooks = await get(me, `/endpoints/${me.slug}/webhooks`);
  assert.match(webhooks.text, /href="\/quarantine"/, 'the webhooks page leads to the quarantine');
  assert.match(
    webhooks.text,
    new RegExp(`href="/endpoints/${me.slug}/webhooks/${hook.id}/rules"`),
    'and to each webhook’s rules',
  );

  const list = await get(me, '/quarantine');
  assert.equal(list.status, 200);
  const row = new RegExp(`<tr data-quarantine="${id}">[\\s\\S]*?</tr>`).exec(list.text)?.[0] ?? '';
  assert.ok(row, 'the item is listed');
  assert.ok(row.includes(`href="/quarantine/${id}"`));
  assert.ok(row.includes('deploy the thing'), 'what it would make');
  assert.ok(row.includes(' UTC'), 'when it was received');
  assert.ok(row.includes('data-qstate="held"'));

  const shown = await get(me, `/quarantine/${id}`);
  assert.equal(shown.status, 200);
  assert.match(shown.text, /<pre>[\s\S]*&quot;build&quot;: 7[\s\S]*<\/pre>/, 'the payload as pretty JSON');
  assert.match(shown.text, new RegExp(`action="/quarantine/${id}/release"`));
  assert.match(shown.text, new RegExp(`action="/quarantine/${id}/discard"`));
  assert.equal(await todoCount(me.id), 0, 'nothing made while held');

  const released = await post(me, `/quarantine/${id}/release`);
  assert.equal(released.status, 303);
  assert.equal(released.location, `/quarantine?done=released&item=${id}`);
  assert.equal(await todoCount(me.id), 1, 'release made the todo');
  const todo = (await db.pool.query<{ id: string }>('SELECT id FROM todos WHERE endpoint_id = $1', [me.id])).rows[0];
  const after = await get(me, released.location ?? '');
  assert.match(after.text, /data-done="released"/);
  assert.ok(after.text.includes(`href="/todos/${todo?.id}"`), 'the notice links the todo it made');
  assert.ok(!after.text.includes(`<tr data-quarantine="${id}">`), 'no longer held');
  const releasedList = await get(me, '/quarantine?state=released');
  assert.ok(releasedList.text.includes(`<tr data-quarantine="${id}">`));

  const again = await post(me, `/quarantine/${id}/release`);
  assert.equal(again.status, 409);
  assert.match(again.text, /already released/);
  assert.equal(await todoCount(me.id), 1, 'nothing more was made');
  assert.equal((await post(me, `/quarantine/${id}/discard`, { reason: 'late' })).status, 409);
});

test('discard needs a reason, keeps it, and makes nothing; hostile payload and actor text is escaped', async () => {
  const me = await person('Discarder');
  const hook = await gated(me);
  const held = await deliver(hook.url, {
    title: '<script>alert(1)</script>',
    note: '<img src=x onerror=alert(2)>',
  });
  const id = held.body.quarantine_id ?? '';
  assert.ok(id, JSON.stringify(held.body));
  // A token delivery names no actor; stand in for a provider login chosen to be hostile.
  await db.pool.query('UPDATE quarantine_items SET actor = $1 WHERE id = $2', ['<b onmouseover=x>mallory</b>', id]);

  for (const path of ['/quarantine', `/quarantine/${id}`]) {
    const res = await get(me, path);
    assert.equal(res.status, 200);
    assert.doesNotMatch(res.text, /<script>alert|<img src=x|<b onmouseover/, path);
    assert.match(res.text, /&lt;b onmouseover=x&gt;mallory&lt;\/b&gt;/, `${path} shows the actor as text`);
    assert.match(res.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, `${path} shows the title as text`);
  }

  const noReason = await post(me, `/quarantine/${id}/discard`, { reason: '' });
  assert.equal(noReason.status, 400);
  assert.match(noReason.text, /data-error-for="reason"/);
  const discarded = await post(me, `/quarantine/${id}/discard`, { reason: 'prompt injection <attempt>' });
  assert.equal(discarded.status, 303);
  assert.equal(discarded.location, `/quarantine?done=discarded&item=${id}`);
  const item = (
    await db.pool.query<{ state: string; resolution: string }>(
      'SELECT state, resolution FROM quarantine_items WHERE id = $1',
      [id],
    )
  ).rows[0];
  assert.deepEqual(item, { state: 'discarded', resolution: 'prompt injection <attempt>' });
  assert.equal(await todoCount(me.id), 0);
  const shown = await get(me, `/quarantine/${id}`);
  assert.match(shown.text, /prompt injection &lt;attempt&gt;/);
  assert.doesNotMatch(shown.text, /action="[^"]+\/release"/, 'a resolved item has no forms');

  const other = await person('Stranger');
  assert.equal((await get(other, `/quarantine/${id}`)).status, 404);
  assert.equal((await post(other, `/quarantine/${id}/release`)).status, 404);
  assert.ok(!(await get(other, '/quarantine')).text.includes(id));
  // Another human reaches neither my endpoint's rules page nor my webhook through their own endpoint.
  assert.equal((await get(other, `/endpoints/${me.slug}/webhooks/${hook.id}/rules`)).status, 404);
  assert.equal((await get(other, `/endpoints/${other.slug}/webhooks/${hook.id}/rules`)).status, 404);
  assert.equal((await boardRequest(url, 'POST', `/quarantine/${id}/release`, me.cookie, {})).status, 403);
});

test('the rules page saves valid rules, names rules[0].when on a compile error keeping the text, and dry-runs a draft', async () => {
  const me = await person('Router');
  const hook = await tokenWebhook(me);
  const base = `/endpoints/${me.slug}/webhooks/${hook.id}/rules`;
  const empty = await get(me, base);
  assert.equal(empty.status, 200);
  assert.match(empty.text, /No rules/);
  assert.match(empty.text, /<textarea id="r-json" name="rules"/);

  const valid = JSON.stringify({
    rules: [{ name: 'ops builds', when: 'payload.kind == "build"', then: { action: 'route', queue: 'ops' } }],
    default: 'drop',
  });
  const saved = await post(me, base, { rules: valid });
  assert.equal(saved.status, 200, saved.text);
  assert.match(saved.text, /data-saved/);
  assert.match(saved.text, /<tr data-rule="rl_[^"]+">[\s\S]*ops builds[\s\S]*payload\.kind == &quot;build&quot;/);
  const stored = (
    await db.pool.query<{ rules: unknown[]; rules_default: string }>(
      'SELECT rules, rules_default FROM webhooks WHERE id = $1',
      [hook.id],
    )
  ).rows[0];
  assert.equal(stored?.rules.length, 1);
  assert.equal(stored?.rules_default, 'drop');

  const broken = JSON.stringify({ rules: [{ name: 'typo', when: 'event.typo == "x"', then: { action: 'drop' } }] });
  const refused = await post(me, base, { rules: broken });
  assert.equal(refused.status, 400);
  assert.match(refused.text, /data-error-for="rules">rules\[0\]\.when/);
  assert.match(refused.text, /<textarea id="r-json" name="rules"[^>]*aria-invalid="true"[^>]*>[^<]*event\.typo/);
  assert.equal(
    (
      await db.pool.query<{ n: number }>('SELECT jsonb_array_length(rules)::int AS n FROM webhooks WHERE id = $1', [
        hook.id,
      ])
    ).rows[0]?.n,
    1,
    'nothing saved',
  );
  const notJson = await post(me, base, { rules: '{"rules": [' });
  assert.equal(notJson.status, 400);
  assert.match(notJson.text, /rules: not JSON/);

  const draft = JSON.stringify({
    rules: [
      {
        name: 'builds <to> ops',
        when: 'event.type == "build"',
        then: { action: 'route', queue: 'ops', title: 'Build {{ payload.n }}' },
      },
    ],
  });
  const run = await post(me, `${base}/test`, { rules: draft, payload: '{"n": 42}', type: 'build' });
  assert.equal(run.status, 200, run.text);
  const result = /<tr data-result="routed">[\s\S]*?<\/tr>/.exec(run.text)?.[0] ?? '';
  assert.ok(result, 'a routed result');
  assert.ok(result.includes('builds &lt;to&gt; ops'), 'the rule, escaped');
  assert.ok(result.includes('Build 42'), 'the title it would make');
  assert.ok(result.includes('<code>ops</code>'), 'the queue');
  assert.match(run.text, /<textarea id="r-json"[^>]*>[^<]*builds &lt;to&gt; ops/, 'the draft is kept in the box');
  assert.equal(
    (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [me.id])).rows[0]
      ?.n,
    0,
    'a dry run makes nothing',
  );
  const dropped = await post(me, `${base}/test`, { rules: valid, payload: '{"kind": "other"}' });
  assert.match(dropped.text, /<tr data-result="dropped">/);
  const last = await post(me, `${base}/test`, { rules: valid, last: '50' });
  assert.equal(last.status, 200);
  assert.match(last.text, /No deliveries to run the rules on/);
});

test('with JavaScript, the Dry run button (a formaction of the rules form) answers the results in place', async () => {
  const me = await person('Live router');
  const hook = await tokenWebhook(me);
  const { page, errors } = await signedInPage(browser, url, me.who);
  await page.goto(`/endpoints/${me.slug}/webhooks`);
  await page.getByRole('link', { name: 'Rules of hook' }).click();
  await page.getByRole('heading', { name: `Rules of webhook ${hook.id}`, level: 1 }).waitFor();
  await page.getByLabel('Payload JSON').fill('{"title": "hello"}');
  await page.getByRole('button', { name: 'Dry run', exact: true }).click();
  await page.locator('tr[data-result="routed"]').waitFor();
  assert.ok(new URL(page.url()).pathname.endsWith(`/endpoints/${me.slug}/webhooks/${hook.id}/rules`), page.url());
  assert.deepEqual(errors, []);
});

test('the drawer shows the route of a todo a rule made: the event linked, the rule by name and position, the steps', async () => {
  const me = await person('Fan out');
  const hook = await tokenWebhook(me);
  const { endpoint: second } = await vendEndpoint(deps, me.who.id, { name: 'Tester', queues: ['ops'] }, new Date());
  await setRules({ db: db.pool }, { humanId: me.who.id }, hook.id, {
    rules: [
      { name: 'pings', when: 'payload.?kind.orValue("") == "ping"', then: { action: 'drop' } },
      {
        name: 'builds <b>to</b> tester',
        when: 'has(payload.build)',
        then: { action: 'route', endpoints: [second.slug], queue: 'ops', title: 'Build {{ payload.note }}' },
      },
    ],
  });
  const sent = await deliver(hook.url, { build: 7, note: '<img src=x onerror=alert(3)>' });
  assert.equal(sent.body.disposition, 'routed', JSON.stringify(sent.body));
  const todo = (await db.pool.query<{ id: string }>('SELECT id FROM todos WHERE endpoint_id = $1', [second.id]))
    .rows[0];
  const event = (await db.pool.query<{ id: string }>('SELECT id FROM webhook_events WHERE endpoint_id = $1', [me.id]))
    .rows[0];
  assert.ok(todo && event);

  const res = await fetch(`${url}/todos/${todo.id}`, { headers: { cookie: me.cookie, 'hx-target': 'drawer' } });
  assert.equal(res.status, 200);
  const drawer = await res.text();
  assert.match(drawer, /aria-labelledby="drawer-title"/, 'the drawer fragment');
  const route = /<section class="slot" data-slot="route">[\s\S]*?<\/section>/.exec(drawer)?.[0] ?? '';
  assert.ok(route, 'a route section');
  // The event lives in the webhook's endpoint's history, not the tester's: the link goes there.
  assert.ok(route.includes(`href="/endpoints/${me.id}/events/${event.id}"`), route);
  assert.match(route, /data-disposition="routed"/);
  assert.match(
    route,
    /data-field="rule"><span data-rule="rl_[^"]+">builds &lt;b&gt;to&lt;\/b&gt; tester <span class="note">\(rules\[1\] · /,
  );
  for (const step of ['rule', 'decide', 'route']) assert.match(route, new RegExp(`<li data-step="${step}">`), step);
  assert.ok(route.includes(todo.id), "this todo's route step");
  assert.doesNotMatch(drawer, /<img src=x|<b>to<\/b>/, 'provider text and rule names are escaped');
  assert.match(route, /Build &lt;img src=x onerror=alert\(3\)&gt;/, 'the values the expressions produced');

  const linked = await get(me, `/endpoints/${me.id}/events/${event.id}`);
  assert.equal(linked.status, 200, 'the link opens the event');
  const page = await get(me, `/todos/${todo.id}`);
  assert.match(page.text, /data-slot="route"/, 'the todo page shows it too');

  const plain = await post(me, '/todos', { target: `${me.slug}/inbox`, title: 'by hand' });
  assert.equal(plain.status, 303);
  const mine = (
    await db.pool.query<{ id: string }>('SELECT id FROM todos WHERE endpoint_id = $1 AND event_id IS NULL', [me.id])
  ).rows[0];
  assert.doesNotMatch((await get(me, `/todos/${mine?.id}`)).text, /data-slot="route"/, 'no route without an event');

  const other = await person('Onlooker');
  assert.equal((await get(other, `/todos/${todo.id}`)).status, 404);
});

test('the trusted-actors form turns the gate on, names a bad `when` next to its field, and turns it off', async () => {
  const me = await person('Gate setter');
  const hook = await tokenWebhook(me);
  const base = `/endpoints/${me.slug}/webhooks/${hook.id}/rules`;
  const gate = async () =>
    (
      await db.pool.query<{ trusted_actors: string[] | null; trust_when: string | null }>(
        'SELECT trusted_actors, trust_when FROM webhooks WHERE id = $1',
        [hook.id],
      )
    ).rows[0];
  const before = await get(me, base);
  assert.match(before.text, /data-trust="off"/);
  assert.match(before.text, new RegExp(`<form method="post" action="${base}/trust">`));

  const set = await post(me, `${base}/trust`, {
    actors: 'alice, bob\n  carol\n\n<mallory>',
    when: 'payload.?role.orValue("") == "maintainer"',
  });
  assert.equal(set.status, 303, set.text);
  assert.equal(set.location, `${base}?trust=set`);
  assert.deepEqual(await gate(), {
    trusted_actors: ['alice', 'bob', 'carol', '<mallory>'],
    trust_when: 'payload.?role.orValue("") == "maintainer"',
  });
  const shown = await get(me, set.location ?? '');
  assert.match(shown.text, /data-trust-done="set"/);
  assert.match(
    shown.text,
    /data-trust="on"[^>]*>Trust gate on: routed events are trusted from actors <code>alice<\/code>/,
  );
  assert.match(shown.text, /<textarea id="t-actors" name="actors"[^>]*>alice\nbob\ncarol\n&lt;mallory&gt;<\/textarea>/);
  assert.doesNotMatch(shown.text, /<mallory>/, 'an actor is text');
  assert.match(shown.text, /value="payload\.\?role\.orValue\(&quot;&quot;\) == &quot;maintainer&quot;"/);

  const bad = await post(me, `${base}/trust`, { actors: 'dave', when: 'event.actor == ' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /<p class="error" role="alert" id="t-when-error" data-error-for="when">when: [^<]*position/);
  assert.match(bad.text, /<input id="t-when" name="when"[^>]*value="event\.actor == "[^>]*aria-invalid="true"/);
  assert.match(bad.text, /<textarea id="t-actors" name="actors"[^>]*>dave<\/textarea>/, 'what was typed is kept');
  assert.deepEqual((await gate())?.trusted_actors, ['alice', 'bob', 'carol', '<mallory>'], 'nothing saved');
  const long = await post(me, `${base}/trust`, { actors: 'x'.repeat(201) });
  assert.equal(long.status, 400);
  assert.match(long.text, /data-error-for="actors">actors\.0: /);

  const other = await person('Gate crasher');
  assert.equal((await post(other, `${base}/trust/clear`)).status, 404);
  assert.equal(
    (await post(other, `/endpoints/${other.slug}/webhooks/${hook.id}/rules/trust`, { actors: 'x' })).status,
    404,
  );
  assert.equal((await boardRequest(url, 'POST', `${base}/trust/clear`, me.cookie, {})).status, 403, 'CSRF');
  assert.ok((await gate())?.trusted_actors, 'still on');

  const cleared = await post(me, `${base}/trust/clear`);
  assert.equal(cleared.status, 303);
  assert.equal(cleared.location, `${base}?trust=cleared`);
  assert.deepEqual(await gate(), { trusted_actors: null, trust_when: null });
  const after = await get(me, cleared.location ?? '');
  assert.match(after.text, /data-trust-done="cleared"/);
  assert.match(after.text, /data-trust="off"/);
  assert.doesNotMatch(after.text, /Turn the trust gate off/);
});
