// Fuzzing every /api/v1 route (and the public ingest route) of a real `serve` instance:
// the route table is read from Fastify itself, every method of every route is driven
// with valid bodies generated from per-route seeds and then mutated, path parameters
// drawn from the run's own ids (other tenants' and other kinds' included) or hostile
// text, as each human, a workflow token, no token, a wrong one and a revoked one. The
// oracle: no status ≥ 500, no dropped connection, every error in the documented shape
// with the status of its code, invalid_argument naming its field; afterwards the server still answers and every CHECK and
// documented invariant holds in the database. The cases run with the limits they do not
// test raised (so they reach the handlers; only a small share may answer 429), then a
// quarter as many more with the default limits (test/fuzz/world.ts). The short form runs
// under `npm test`; SWITCHBOARD_FUZZ_CASES picks the long form, SWITCHBOARD_FUZZ_SEED
// replays a run.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import {
  describeSent,
  judgeApi,
  Pools,
  send,
  bodyBytes,
  summarize,
  type Answer,
  type Finding,
  type Sent,
} from './http.js';
import { casesFor, fuzzSeed, Rng } from './rng.js';
import { garbageText, hostileString, mutate, type Body } from './values.js';
import { invariantCount, violations } from './invariants.js';
import {
  call,
  checkExhausted,
  fixedCeiling,
  defaultPassCases,
  freshAddress,
  makePeople,
  humanToken,
  workflowToken,
  openSession,
  PASSWORD,
  pushTodo,
  startWorld,
  usePass,
  vendEndpoint,
  type Person,
} from './world.js';

const seed = fuzzSeed();
const CASES = casesFor('api');
const DEFAULT_CASES = defaultPassCases(CASES);
process.stdout.write(
  `api fuzz: seed ${seed} (replay: SWITCHBOARD_FUZZ_SEED=${seed}), ${CASES} cases + ${DEFAULT_CASES} with default limits\n`,
);
const rng = new Rng(seed, 'api');

const world = await startWorld('fuzz_api');
const people = await makePeople(world);
const { admin, member, other } = people;

/** The route table as Fastify has it: every path with its methods (printRoutes' tree, flattened). */
function routeTable(tree: string): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[└├]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = (m[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(m[2] ?? '');
    const path = stack.join('');
    for (const method of (m[3] ?? '').split(', ').filter(Boolean)) out.push({ method, path });
  }
  return out;
}

const ROUTES = routeTable(world.server.app.printRoutes({ commonPrefix: false })).filter(
  (r) => (r.path.startsWith('/api/v1/') || r.path.startsWith('/webhooks/')) && r.method !== 'HEAD',
);

// ---- the run's actors and pools ---------------------------------------------------------

// The run's own people and control tokens are never a path parameter: disabling or
// deleting one of them (PATCH/DELETE /api/v1/humans/:id) would end the run's sign-ins.
const reserved = new Set([admin.controlId, member.controlId, other.controlId, admin.id, member.id, other.id]);
const pools = new Pools(reserved);
const tokens = new Map<Person, string[]>();
const revoked: string[] = [];
const workflowTokens: string[] = [];
for (const [person, n] of [
  [admin, 6],
  [member, 3],
  [other, 3],
] as const) {
  const list: string[] = [];
  for (let i = 0; i < n; i++) list.push((await humanToken(world, person)).token);
  tokens.set(person, list);
  workflowTokens.push((await workflowToken(world, person)).token);
}

const mine = await vendEndpoint(world, admin, {
  name: 'fuzz mine',
  queues: ['inbox', 'work'],
  verbs: ['drain', 'create', 'messages', 'admission', 'hooks', 'webhooks', 'events'],
});
const theirs = await vendEndpoint(world, other, { name: 'fuzz theirs', queues: ['inbox'] });
const members = await vendEndpoint(world, member, { name: 'fuzz members' });
for (const e of [mine, theirs, members]) {
  pools.add('slug', e.slug);
  pools.add('ep', e.id);
  for (let i = 0; i < 3; i++)
    pools.add('td', await pushTodo(world, e.owner, e.slug, { queue: 'inbox', title: `seed ${i}` }));
  pools.add('ms', await openSession(world, e.credential));
}
pools.add('ms', await openSession(world, mine.credential));
const hook = await call(world, 'POST', `/api/v1/endpoints/${mine.slug}/webhooks`, admin.control, { queue: 'inbox' });
const ingestTokens: string[] = [];
const harvestIngest = (json: unknown) => {
  const url =
    (json as { webhook?: { url?: unknown }; url?: unknown } | undefined)?.webhook?.url ??
    (json as { url?: unknown })?.url;
  if (typeof url === 'string' && url.includes('/webhooks/')) ingestTokens.push(url.slice(url.lastIndexOf('/') + 1));
};
harvestIngest(hook.json);
pools.harvest(hook.json);
// Signed webhooks too (docs/design/intake.md): their tokens take signature headers, some
// right (signed over the very bytes sent), most wrong or malformed.
const PROVIDERS = ['github', 'gitea', 'gitlab', 'stripe', 'slack', 'standard'] as const;
const signedHooks = new Map<string, { provider: string; secret: string }>();
for (const provider of PROVIDERS) {
  const made = await call(world, 'POST', `/api/v1/endpoints/${mine.slug}/webhooks`, admin.control, {
    queue: 'inbox',
    provider,
  });
  const answer = made.json as { url?: string; secret?: string };
  if (typeof answer.url === 'string' && typeof answer.secret === 'string') {
    const token = answer.url.slice(answer.url.lastIndexOf('/') + 1);
    ingestTokens.push(token);
    signedHooks.set(token, { provider, secret: answer.secret });
  }
  pools.harvest(made.json);
}
// Grants both ways: one active (one owner), one requested (across owners), for the :id routes.
for (const [owner, from, to] of [
  [admin, mine, members],
  [admin, mine, theirs],
] as const) {
  pools.harvest(
    (await call(world, 'POST', '/api/v1/grants', owner.control, { from: from.slug, to: to.slug, queues: ['inbox'] }))
      .json,
  );
}
for (const path of ['/api/v1/humans', '/api/v1/tokens', `/api/v1/sessions/${pools.get('ms')[0]}/queue`]) {
  pools.harvest((await call(world, 'GET', path, admin.control)).json);
}
const credentials = [mine.credential, theirs.credential];

// ---- generation -------------------------------------------------------------------------

const QUEUES = ['inbox', 'work', 'other', 'Inbox', 'a'.repeat(63), 'a'.repeat(64)];

function pickId(kind: string): string {
  const own = pools.get(kind);
  return rng.weighted<() => string>([
    [own.length > 0 ? 7 : 0, () => rng.pick(own)],
    [2, () => rng.pick(pools.all())],
    [2, () => hostileString(rng)],
  ])();
}

function ref(): string {
  return rng.weighted<() => string>([
    [4, () => rng.pick(pools.get('slug'))],
    [3, () => rng.pick(pools.get('ep'))],
    [1, () => rng.pick(pools.all())],
    [2, () => hostileString(rng)],
  ])();
}

/** The value of one path parameter of this route. */
function param(name: string, path: string): string {
  switch (name) {
    case 'ref':
      return ref();
    case 'scope':
      return rng.weighted<() => string>([
        [6, () => `endpoint:${ref()}`],
        [1, () => `team:${ref()}`],
        [1, () => 'endpoint:'],
        [1, () => hostileString(rng)],
      ])();
    case 'queue':
      return rng.chance(0.8) ? rng.pick(QUEUES) : hostileString(rng);
    case 'entry':
      return pickId('uuid');
    case 'test_id':
      return pickId('dt');
    case 'tokenId':
      return pickId('tk');
    case 'token':
      return rng.chance(0.6) && ingestTokens.length > 0 ? rng.pick(ingestTokens) : hostileString(rng);
    default: {
      const kind = path.startsWith('/api/v1/todos')
        ? 'td'
        : path.startsWith('/api/v1/tokens')
          ? 'tk'
          : path.startsWith('/api/v1/humans')
            ? 'hu'
            : path.startsWith('/api/v1/webhooks')
              ? 'wh'
              : path.startsWith('/api/v1/events')
                ? 'ev'
                : path.startsWith('/api/v1/sessions')
                  ? 'ms'
                  : path.startsWith('/api/v1/grants')
                    ? 'gr'
                    : 'nh';
      return pickId(kind);
    }
  }
}

/** encodeURIComponent, with a lone surrogate (which it refuses) sent as the invalid UTF-8 it would be. */
function encodeText(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

/** Path text for a parameter value: encoded, or now and then raw bytes the router must cope with. */
function encodeSegment(value: string): string {
  return rng.weighted<() => string>([
    [12, () => encodeText(value)],
    [1, () => rng.pick(['%', '%zz', '%00', '%E0%A4%A', '..', '.', '%2F', '%2e%2e', '%u0041'])],
    [1, () => `${encodeText(value)}/${encodeText(value)}`],
    [1, () => ''],
    [1, () => 'a'.repeat(rng.pick([300, 10_000, 70_000]))],
  ])();
}

const emails = ['admin@example.test', 'member@example.test', 'other@example.test', 'nobody@example.test'];

/** A valid body for the route (per-route seeds: the use cases validate with zod schemas of their own). */
function seedBody(method: string, path: string): unknown {
  const key = `${method} ${path}`;
  switch (key) {
    case 'POST /api/v1/setup':
      return {
        token: hostileString(rng),
        email: `new-${rng.int(0, 1e6)}@example.test`,
        password: PASSWORD,
        display_name: 'x',
      };
    case 'POST /api/v1/todos/:id/answer':
      return rng.chance(0.5) ? { text: hostileString(rng) } : { choice: rng.int(0, 3) };
    case 'POST /api/v1/auth/login':
      return {
        email: rng.pick(emails),
        password: rng.chance(0.7) ? PASSWORD : 'wrong password',
        ...(rng.chance(0.3) ? { token_name: 'cli' } : {}),
      };
    case 'POST /api/v1/auth/cli-token':
      // A code the fuzzer cannot have been handed: every case is a refusal, by field.
      return {
        code: rng.chance(0.5) ? `sbl_${'A'.repeat(43)}` : hostileString(rng),
        code_verifier: rng.chance(0.7) ? 'v'.repeat(43) : hostileString(rng),
        redirect_uri: rng.pick(['http://127.0.0.1:5000/callback', 'http://[::1]:1/callback', hostileString(rng)]),
        ...(rng.chance(0.3) ? { token_name: 'switchboard CLI' } : {}),
      };
    case 'POST /api/v1/tokens':
      return {
        name: `t ${rng.int(0, 1e6)}`,
        ...(rng.chance(0.3) ? { kind: 'workflow' } : {}),
        ...(rng.chance(0.3) ? { expires_at: '2030-01-01T00:00:00Z' } : {}),
      };
    case 'POST /api/v1/humans':
      return {
        email: `h${rng.int(0, 1e9)}@example.test`,
        display_name: 'Fuzz',
        role: rng.pick(['admin', 'member']),
        password: PASSWORD,
      };
    case 'PATCH /api/v1/humans/:id':
      return rng.pick([
        { state: 'disabled' },
        { state: 'active' },
        { role: 'admin' },
        { role: 'member', state: 'active' },
      ]);
    case 'DELETE /api/v1/humans/:id':
      return rng.chance(0.5) ? { transfer_endpoints_to: pickId('hu') } : undefined;
    case 'POST /api/v1/me/password':
      // Never the real current password: a change would end the run's own sign-ins.
      return { current: 'not the password', new: PASSWORD, ...(rng.chance(0.5) ? { keep_sessions: true } : {}) };
    case 'POST /api/v1/endpoints':
      return {
        name: `fz ${rng.int(0, 1e6)}`,
        queues: rng.chance(0.7) ? ['inbox', 'work'] : ['inbox'],
        verbs: rng.pick([
          ['drain'],
          ['drain', 'create', 'messages', 'admission', 'hooks', 'webhooks', 'events'],
          ['claim', 'complete'],
        ]),
        ...(rng.chance(0.3) ? { expires_at: rng.pick(['2030-01-01T00:00:00Z', '2020-01-01T00:00:00Z']) } : {}),
        ...(rng.chance(0.3) ? { default_lease_seconds: rng.pick([5, 60, 86_400]) } : {}),
        ...(rng.chance(0.3) ? { accept_agent_messages: rng.chance(0.5) } : {}),
      };
    case 'PATCH /api/v1/endpoints/:ref':
      return rng.pick([
        { accept_agent_messages: rng.chance(0.5) },
        { name: hostileString(rng) },
        { default_lease_seconds: rng.pick([null, 5, 600, 86_400, 0, -1]) },
        { add_queues: [rng.pick(['inbox', 'extra', `q${rng.int(0, 60)}`, hostileString(rng)])] },
        // Never the queues the run's todos use.
        { remove_queues: [rng.pick(['extra', `q${rng.int(0, 60)}`, hostileString(rng)])] },
      ]);
    case 'POST /api/v1/humans/:id/reset':
      // Never a credential replaced: the run's agents keep using the ones they were vended.
      return rng.pick([{}, { revoke_oauth_grants: rng.chance(0.5) }, { rotate_endpoint_credentials: 'yes' }]);
    case 'POST /api/v1/endpoints/:ref/rotate':
      // Never no grace: the run's agents keep using the credentials they were vended.
      return rng.chance(0.3) ? {} : { grace_seconds: rng.pick([60, 3600, 604_800, -1, 604_801]) };
    case 'POST /api/v1/endpoints/:ref/todos':
      return {
        queue: rng.pick(['inbox', 'work']),
        title: `fuzz todo ${rng.int(0, 1e6)}`,
        ...(rng.chance(0.4) ? { body: 'do it' } : {}),
        ...(rng.chance(0.4) ? { payload: { n: rng.int(0, 9), list: [1, 'two', null] } } : {}),
        ...(rng.chance(0.3) ? { kind: 'fuzz' } : {}),
        ...(rng.chance(0.3) ? { idempotency_key: `k${rng.int(0, 20)}` } : {}),
        ...(rng.chance(0.3) ? { max_attempts: rng.int(1, 100) } : {}),
      };
    case 'POST /api/v1/endpoints/:ref/webhooks':
      return {
        queue: rng.pick(['inbox', 'work']),
        ...(rng.chance(0.5) ? { name: 'hook' } : {}),
        ...(rng.chance(0.5) ? { provider: rng.pick(['token', ...PROVIDERS]) } : {}),
        ...(rng.chance(0.2)
          ? { secret: rng.pick(['whsec_c2VjcmV0c2VjcmV0c2VjcmV0', 'short', 'a b c d e f g h i j']) }
          : {}),
      };
    case 'POST /api/v1/webhooks/:id/secret':
      return rng.chance(0.5) ? {} : { secret: rng.pick(['whsec_c2VjcmV0c2VjcmV0c2VjcmV0', 'xoxb-not-secret', '']) };
    case 'PUT /api/v1/webhooks/:id/rules':
      return {
        rules: rng.pick([
          [],
          [{ name: 'bots', when: 'event.actor.endsWith("[bot]")', then: { action: 'drop' } }],
          [{ name: 'all', when: 'true', then: { action: 'route', title: 'x {{ payload.n }}', priority: 'int(1)' } }],
          [{ name: 'bad', when: 'event.type ==', then: { action: 'quarantine' } }],
        ]),
        ...(rng.chance(0.5) ? { default: rng.pick(['route', 'drop', 'bogus']) } : {}),
      };
    case 'POST /api/v1/webhooks/:id/rules/test':
      return rng.chance(0.5)
        ? { last: rng.pick([1, 5, 50, 51]) }
        : { payload: { n: 1, title: 'x' }, event: { type: 'push' } };
    case 'PUT /api/v1/webhooks/:id/trusted-actors':
      return {
        actors: rng.pick([[], ['alice'], ['a', '']]),
        ...(rng.chance(0.3) ? { when: 'event.actor == "x"' } : {}),
      };
    case 'POST /api/v1/quarantine/:id/discard':
      return { reason: rng.pick(['spam', '', 'x'.repeat(600)]) };
    case 'PUT /api/v1/admission/:scope/:queue':
      return {
        max_in_flight: rng.pick([null, 0, 1, 5, 10_000]),
        max_claims_per_window: rng.pick([null, 0, 3, 1_000_000]),
        window: rng.chance(0.8)
          ? {
              period: rng.pick(['hour', 'day', 'week']),
              tz: rng.pick(['UTC', 'Europe/London', 'America/New_York', 'Asia/Kolkata']),
              start: rng.pick(['00:00', '09:30', '23:59']),
              ...(rng.chance(0.5) ? { weekday: rng.pick(['Mon', 'Sun']) } : {}),
            }
          : null,
      };
    case 'POST /api/v1/endpoints/:ref/doorbell-tests':
      return rng.chance(0.5) ? {} : { wait_seconds: rng.int(10, 300) };
    case 'POST /api/v1/sessions/:id/queue':
    case 'PATCH /api/v1/sessions/:id/queue/:entry':
      return { content: `message ${rng.int(0, 1e6)}` };
    case 'POST /api/v1/sessions/:id/queue/reorder':
      return { entry_ids: pools.get('uuid').slice(-rng.int(0, 4)) };
    case 'PATCH /api/v1/settings/message-queue':
      return { max_per_session: rng.pick([0, 1, 3, 10, 100]) };
    case 'POST /api/v1/endpoints/:ref/notify-hooks/:id/rotate':
      return rng.chance(0.5) ? { immediate: rng.chance(0.5) } : {};
    case 'POST /api/v1/endpoints/:ref/notify-hooks':
      return {
        url: rng.pick([
          'https://93.184.216.34/hook',
          'https://example.invalid/hook',
          'http://93.184.216.34/',
          'https://[2606:2800:220:1::]/x',
        ]),
        ...(rng.chance(0.5) ? { queues: ['inbox'] } : {}),
        ...(rng.chance(0.5) ? { ignore_presence: rng.chance(0.5) } : {}),
      };
    case 'POST /api/v1/endpoints/:ref/schedules':
      return {
        queue: rng.pick(['inbox', 'work', 'nope']),
        cron: rng.pick(['0 9 * * 1-5', '*/15 * * * *', '61 * * * *', '0 0 31 2 *', '@daily']),
        tz: rng.pick(['UTC', 'Europe/Berlin', 'Mars/Olympus']),
        title: rng.pick(['daily', '', 'x'.repeat(201)]),
        ...(rng.chance(0.3) ? { priority: rng.pick([0, 100, 101, -5]) } : {}),
      };
    case 'PATCH /api/v1/endpoints/:ref/schedules/:id':
      return rng.pick([
        { paused: true },
        { paused: false },
        { cron: '0 0 * * *' },
        { tz: 'Asia/Tokyo' },
        { title: '' },
      ]);
    case 'POST /api/v1/endpoints/:ref/todos/bulk':
      return {
        action: rng.pick(['cancel', 'retry']),
        filter: {
          ...(rng.chance(0.5) ? { queue: rng.pick(['inbox', 'work']) } : {}),
          ...(rng.chance(0.3)
            ? { state: rng.pick(['pending', 'failed', 'canceled', 'claimed', 'waiting_on_human']) }
            : {}),
          ...(rng.chance(0.3) ? { q: rng.pick(['fuzz', '50%', 'todo_1']) } : {}),
          ...(rng.chance(0.2) ? { created_after: '2020-01-01T00:00:00Z' } : {}),
        },
        ...(rng.chance(0.5) ? { dry_run: rng.chance(0.5) } : {}),
      };
    case 'PUT /api/v1/endpoints/:ref/presence':
      return {
        presence: rng.pick(['in', 'out']),
        ...(rng.chance(0.5) ? { until: rng.pick([null, '2030-01-01T00:00:00Z', '2020-01-01T00:00:00+02:00']) } : {}),
      };
    case 'PUT /api/v1/endpoints/:ref/shift':
      return {
        shift: rng.pick([
          null,
          'Mon-Fri 09:00-17:00',
          'TZ=Europe/Berlin; Mon-Fri 09:00-17:00; Sat 10:00-12:00',
          'Fri-Sun 22:00-02:00',
          '00:00-24:00',
        ]),
      };
    case 'POST /api/v1/grants':
      return {
        from: rng.pick(pools.get('slug')),
        to: rng.pick(pools.get('slug')),
        queues: rng.pick([['inbox'], ['inbox', 'work'], ['nope'], []]),
        ...(rng.chance(0.3) ? { max_priority: rng.pick([0, 100, 101]) } : {}),
        ...(rng.chance(0.3) ? { rate_per_hour: rng.pick([1, 60, 0]) } : {}),
      };
    case 'POST /webhooks/:token':
      return { title: 'from a webhook', any: [1, 2, { deep: true }] };
    default:
      return undefined;
  }
}

/** Every route with a body has a seed: a new route must be added above to be fuzzed well. */
const BODYLESS = new Set([
  'POST /api/v1/auth/logout',
  'POST /api/v1/endpoints/:ref/revoke',
  'POST /api/v1/todos/:id/retry',
  'POST /api/v1/todos/:id/cancel',
  'POST /api/v1/webhooks/:id/rotate',
  'POST /api/v1/events/:id/replay',
  'POST /api/v1/quarantine/:id/release',
  'POST /api/v1/grants/:id/approve',
  'POST /api/v1/grants/:id/deny',
]);

function body(method: string, path: string): Body {
  const seedValue = seedBody(method, path);
  const bodyless = seedValue === undefined;
  const roll = rng.next();
  if (bodyless) {
    if (roll < 0.75) return { kind: 'none' };
    if (roll < 0.9) return { kind: 'json', value: mutate({}, rng, pools.all()) };
    return { kind: 'raw', text: garbageText(rng) };
  }
  if (roll < 0.35) return { kind: 'json', value: seedValue };
  if (roll < 0.88) return { kind: 'json', value: mutate(seedValue, rng, pools.all()) };
  if (roll < 0.95) return { kind: 'raw', text: garbageText(rng) };
  return { kind: 'none' };
}

function query(): string {
  if (!rng.chance(0.4)) return '';
  const parts: string[] = [];
  const n = rng.int(1, 4);
  for (let i = 0; i < n; i++) {
    const key = rng.pick(['limit', 'state', 'queue', 'cursor', 'include_synthetic', 'limit', 'x', '__proto__', '']);
    const value = rng.weighted<() => string>([
      [
        3,
        () =>
          rng.pick([
            '1',
            '50',
            '500',
            '0',
            '-1',
            'abc',
            '1e3',
            '99999999999999999999',
            'pending',
            'done',
            'inbox',
            'true',
          ]),
      ],
      [1, () => (pools.all().length > 0 ? rng.pick(pools.all()) : 'x')],
      [2, () => hostileString(rng).slice(0, 2_000)],
    ])();
    parts.push(`${encodeText(key)}=${encodeText(value)}`);
  }
  return `?${parts.join('&')}`;
}

type Auth = { kind: 'token'; person: Person; token: string } | { kind: 'other'; header: string | undefined };

function auth(): Auth {
  const person = rng.weighted<Person | null>([
    [35, admin],
    [20, member],
    [15, other],
    [30, null],
  ]);
  if (person) return { kind: 'token', person, token: rng.pick(tokens.get(person) ?? []) };
  const header = rng.weighted<() => string | undefined>([
    [8, () => `Bearer ${rng.pick(workflowTokens)}`],
    [8, () => undefined],
    [4, () => 'Bearer sbt_not_a_real_token'],
    [3, () => `Bearer ${rng.pick(credentials)}`],
    [3, () => (revoked.length > 0 ? `Bearer ${rng.pick(revoked)}` : 'Bearer')],
    [
      3,
      () =>
        rng.pick([
          'Basic YWRtaW46cGFzcw==',
          'Bearer',
          'Bearer  ',
          'bearer sbt_x extra',
          `Bearer ${'a'.repeat(5_000)}`,
          'Bearer sbt_\u00e9',
        ]),
    ],
  ])();
  return { kind: 'other', header };
}

/** A request no route has: the not-found answer must keep the error shape too. */
function strayRequest(): { method: string; path: string } {
  return rng.pick([
    { method: 'PUT', path: '/api/v1/tokens' },
    { method: 'GET', path: '/api/v1/nothing-here' },
    { method: 'PATCH', path: '/api/v1/endpoints' },
    { method: 'PUT', path: '/api/v1/humans/x' },
    { method: 'OPTIONS', path: '/api/v1/endpoints' },
    { method: 'POST', path: '/api/v1/' },
  ]);
}

// ---- the run ----------------------------------------------------------------------------

const findings: Finding[] = [];
const statuses = new Map<number, number>();
/** The 429s of the current pass that were a fixed ceiling (fixedCeiling), not a raised limit. */
let fixed = 0;

/** Generates case n (synchronously, in order: the seed decides it) and returns its run. */
function prepare(n: number): () => Promise<() => Promise<void>> {
  const route = rng.chance(0.02) ? strayRequest() : rng.pick(ROUTES);
  const path =
    route.path.replace(/:([a-z_]+)/g, (_m, name: string) => encodeSegment(param(name, route.path))) +
    (route.method === 'GET' ? query() : '');
  const who = auth();
  const generated = body(route.method, route.path);
  const { bytes, type } = bodyBytes(generated, rng);
  const headers: Record<string, string> = {
    'x-forwarded-for': rng.chance(0.97) ? freshAddress() : hostileString(rng).replace(/[^\x20-\x7e]/g, '') || '::1',
  };
  const authorization = who.kind === 'token' ? `Bearer ${who.token}` : who.header;
  if (authorization !== undefined) headers.authorization = authorization.replace(/[^\x20-\x7e]/g, '?');
  if (type !== undefined && bytes !== undefined) headers['content-type'] = type;
  if (route.path === '/webhooks/:token' && rng.chance(0.5))
    headers['x-switchboard-title'] =
      hostileString(rng)
        .replace(/[^\x20-\x7e]/g, '')
        .slice(0, 300) || 't';
  if (route.path === '/webhooks/:token') Object.assign(headers, providerHeaders(path, bytes));
  const sent: Sent = { method: route.method, path, headers, body: bytes };
  return async () => {
    const answer = await send(world.base, sent);
    return () => judge(n, route, who, sent, answer);
  };
}

/**
 * Signature and provider headers for an ingest case: for a signed webhook's token, now
 * and then a right signature over the very bytes sent (so hostile bodies reach the
 * readers), else missing, malformed, stale or wrong ones, and provider event headers.
 */
function providerHeaders(path: string, bytes: string | Buffer | undefined): Record<string, string> {
  const hook = signedHooks.get(path.slice('/webhooks/'.length).split('?')[0] ?? '');
  const raw = bytes === undefined ? Buffer.alloc(0) : Buffer.from(bytes);
  const now = Math.floor(Date.now() / 1000);
  const ts = String(rng.chance(0.8) ? now : rng.pick([now - 3_600, 0, -1, 1e15]));
  const junk = () =>
    hostileString(rng)
      .replace(/[^\x20-\x7e]/g, '')
      .slice(0, 300);
  const hex = (key: string | Buffer, ...parts: (string | Buffer)[]) => {
    const h = createHmac('sha256', key);
    for (const part of parts) h.update(part);
    return h.digest();
  };
  const right = hook !== undefined && rng.chance(0.4);
  const secret = right ? hook.secret : 'whsec_d3Jvbmcgd3Jvbmcgd3Jvbmcgd3Jvbmc=';
  const id = rng.chance(0.5) ? `fuzz-${rng.int(0, 30)}` : junk() || 'x';
  const headers: Record<string, string> = {};
  switch (hook?.provider ?? rng.pick([...PROVIDERS])) {
    case 'github':
      headers['x-github-event'] = rng.pick(['pull_request', 'issues', 'issue_comment', 'push', junk() || 'x']);
      headers['x-github-delivery'] = id;
      headers['x-hub-signature-256'] = rng.chance(0.9) ? `sha256=${hex(secret, raw).toString('hex')}` : junk();
      break;
    case 'gitea':
      headers['x-gitea-event'] = rng.pick(['issues', 'pull_request', junk() || 'x']);
      headers['x-gitea-delivery'] = id;
      headers['x-gitea-signature'] = rng.chance(0.9) ? hex(secret, raw).toString('hex') : junk();
      break;
    case 'gitlab':
      headers['x-gitlab-event-uuid'] = id;
      headers['x-gitlab-token'] = rng.chance(0.9) ? secret : junk();
      break;
    case 'stripe':
      headers['stripe-signature'] = rng.chance(0.9)
        ? `t=${ts},v1=${hex(secret, `${ts}.`, raw).toString('hex')}`
        : junk();
      break;
    case 'slack':
      headers['x-slack-request-timestamp'] = rng.chance(0.9) ? ts : junk();
      headers['x-slack-signature'] = `v0=${hex(secret, `v0:${ts}:`, raw).toString('hex')}`;
      break;
    default: {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      headers['webhook-id'] = id;
      headers['webhook-timestamp'] = ts;
      headers['webhook-signature'] = rng.chance(0.9)
        ? `v1,${hex(key, `${id}.${ts}.`, raw).toString('base64')}`
        : junk();
    }
  }
  return headers;
}

/** Judges one answer and harvests from it (in case order, after its batch has run). */
async function judge(n: number, route: { method: string; path: string }, who: Auth, sent: Sent, answer: Answer) {
  statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
  if (fixedCeiling(answer.json?.error)) fixed += 1;
  const problem = judgeApi(answer);
  if (problem) {
    findings.push({
      case: n,
      key: `${problem} @ ${route.method} ${route.path}`,
      surface: 'api',
      problem,
      request: describeSent(sent),
      answer: answer.text.slice(0, 300),
    });
  }
  if (answer.json?.error?.code === 'invalid_argument' && answer.json.error.details?.field === undefined) {
    const problem = `invalid_argument naming no field: ${String(answer.json.error.message).slice(0, 60)}`;
    findings.push({
      case: n,
      key: `${problem} @ ${route.method} ${route.path}`,
      surface: 'api',
      problem,
      request: describeSent(sent),
      answer: answer.text.slice(0, 300),
    });
  }
  pools.harvest(answer.json);
  if (route.path.endsWith('/webhooks') || route.path.endsWith('/rotate')) harvestIngest(answer.json);
  if (answer.json?.token && typeof answer.json.secret === 'string') workflowTokens.push(answer.json.secret);
  // A token the run thought live that is refused was revoked by a case (logout, DELETE
  // /tokens/:id): it joins the revoked ones and a fresh token replaces it.
  // (Two cases of one batch may have used it: the second finds it replaced already.)
  const list = who.kind === 'token' ? (tokens.get(who.person) ?? []) : [];
  // Sign-in and setup answer 401 for a wrong password or link whatever the bearer is.
  const signIn = route.path === '/api/v1/auth/login' || route.path === '/api/v1/setup';
  if (who.kind === 'token' && answer.status === 401 && !signIn && list.includes(who.token)) {
    list.splice(list.indexOf(who.token), 1, (await humanToken(world, who.person)).token);
    revoked.push(who.token);
  }
}

/** Cases in flight at once: the server's own concurrency is exercised, and a loaded machine is used. */
const BATCH = 6;

test('every /api/v1 route is in the route table, and every route with a body has a seed', () => {
  const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
  assert.ok(keys.length >= 40, `only ${keys.length} routes found: ${keys.join(', ')}`);
  const unseeded = keys.filter(
    (k) =>
      /^(POST|PUT|PATCH) /.test(k) && !BODYLESS.has(k) && seedBody(k.split(' ')[0]!, k.split(' ')[1]!) === undefined,
  );
  assert.deepEqual(unseeded, []);
});

/** Runs `count` cases numbered from `from` against the world's current instance, then the oracle. */
async function runPass(pass: 'raised' | 'defaults', from: number, count: number): Promise<void> {
  usePass(world, pass);
  statuses.clear();
  fixed = 0;
  const end = from + count;
  for (let n = from; n < end; n += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, end - n) }, (_, i) => prepare(n + i));
    const judged = await Promise.all(batch.map((run) => run()));
    for (const j of judged) await j();
  }
  process.stdout.write(`api fuzz statuses (${pass}): ${JSON.stringify(Object.fromEntries([...statuses].sort()))}\n`);
  // The server still answers, authenticated work included.
  const health = await call(world, 'GET', '/readyz');
  assert.equal(health.status, 200, health.text);
  const whoami = await call(world, 'GET', '/api/v1/whoami', admin.control);
  assert.equal(whoami.status, 200, whoami.text);
  const broken = await violations(world.db.pool);
  process.stdout.write(`api fuzz: ${await invariantCount(world.db.pool)} invariants checked\n`);
  assert.equal(findings.length, 0, `seed ${seed}:\n${summarize(findings)}`);
  assert.deepEqual(broken, [], `seed ${seed}`);
  checkExhausted('api', pass, (statuses.get(429) ?? 0) - fixed, count);
}

test(`API fuzz: ${CASES} cases with the limits raised, no 5xx, errors in the documented shape, invariants hold`, async () => {
  await runPass('raised', 0, CASES);
});

test(`API fuzz: ${DEFAULT_CASES} more cases with the default limits, the same oracle`, async () => {
  await runPass('defaults', CASES, DEFAULT_CASES);
});
