// Fuzzing every MCP verb of a real `serve` instance: the verbs and their input schemas
// come from the verb registry (tools/list's descriptions of every grantable and self
// verb), valid arguments are generated from each schema with the run's own ids, then
// mutated; the JSON-RPC envelope, the headers, the session and the credential are fuzzed
// too, on the direct path and through the SDK transport. The oracle: no HTTP status ≥
// 500, no JSON-RPC internal error (-32603), no tool error `internal`, every tool error in
// the documented `{error: {code, message}}` shape; afterwards the server answers and every
// CHECK and documented invariant holds. A raised-limits pass, then a default-limits pass
// (test/fuzz/world.ts). SWITCHBOARD_FUZZ_CASES / _SEED as in api.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allVerbs, SELF_VERBS } from '../../src/domain/verbs.js';
import { toolsFor } from '../../src/mcp/verbs/index.js';
import { describeSent, Pools, send, statusFits, summarize, type Answer, type Finding, type Sent } from './http.js';
import { invariantCount, violations } from './invariants.js';
import { casesFor, fuzzSeed, Rng } from './rng.js';
import { encode, garbageText, hostileString, hostileValue, mutate, validFrom, type Schema } from './values.js';
import {
  call,
  checkExhausted,
  fixedCeiling,
  defaultPassCases,
  makePeople,
  MCP_HEADERS,
  openSession,
  pushTodo,
  rpcMessages,
  startWorld,
  tool,
  usePass,
  vendEndpoint,
  type Vended,
} from './world.js';
import { MAX_WAIT_SECONDS } from '../../src/domain/todo.js';

const seed = fuzzSeed();
const CASES = casesFor('mcp');
const DEFAULT_CASES = defaultPassCases(CASES);
process.stdout.write(
  `mcp fuzz: seed ${seed} (replay: SWITCHBOARD_FUZZ_SEED=${seed}), ${CASES} cases + ${DEFAULT_CASES} with default limits\n`,
);
const rng = new Rng(seed, 'mcp');

const world = await startWorld('fuzz_mcp');
const { admin, member, other } = await makePeople(world);

/** Every verb there is: the self verbs and every grantable family, with the schema tools/list shows. */
const TOOLS = toolsFor(allVerbs());

const ALL_FAMILIES = ['drain', 'create', 'messages', 'admission', 'hooks', 'webhooks', 'events'];
const main = await vendEndpoint(world, admin, { name: 'fuzz main', queues: ['inbox', 'work'], verbs: ALL_FAMILIES });
// The sibling accepts agent messages, so main's send_message into it reaches the queue.
const sibling = await vendEndpoint(world, admin, {
  name: 'fuzz sibling',
  queues: ['inbox'],
  accept_agent_messages: true,
});
const foreign = await vendEndpoint(world, other, { name: 'fuzz foreign', queues: ['inbox'], verbs: ALL_FAMILIES });
const bare = await vendEndpoint(world, member, { name: 'fuzz bare', queues: ['inbox'], verbs: ['claim'] });

const pools = new Pools();
const sessions = new Map<Vended, string[]>();
for (const e of [main, sibling, foreign, bare]) {
  const list: string[] = [];
  for (let i = 0; i < (e === main ? 3 : 1); i++) list.push(await openSession(world, e.credential, `fuzz-${i}`));
  sessions.set(e, list);
  for (const s of list) pools.add('ms', s);
  for (let i = 0; i < 8; i++) {
    pools.add('td', await pushTodo(world, e.owner, e.slug, { queue: 'inbox', title: `seed ${i}`, max_attempts: 2 }));
  }
}
// Some held work, some finished, some messages waiting, so every verb meets every state.
const mainSession = sessions.get(main)?.[0] ?? '';
for (let i = 0; i < 3; i++) await tool(world, main.credential, mainSession, 'claim_next', { queue: 'inbox' });
for (const s of sessions.get(main) ?? []) {
  const a = await call(world, 'POST', `/api/v1/sessions/${s}/queue`, admin.control, { content: 'hello' });
  pools.harvest(a.json);
}

// A hand-off grant main → sibling (docs/design/handoff.md), so create_todo {endpoint} meets
// a target it may reach as well as ones it may not (foreign, unknown, itself).
const granted = await call(world, 'POST', '/api/v1/grants', admin.control, {
  from: main.slug,
  to: sibling.slug,
  queues: ['inbox'],
});
assert.equal(granted.status, 201, granted.text);

// ---- generation -------------------------------------------------------------------------

function pick(kind: string): string {
  const own = pools.get(kind);
  return own.length > 0 && rng.chance(0.8)
    ? rng.pick(own)
    : rng.chance(0.5)
      ? rng.pick(pools.all())
      : hostileString(rng);
}

/** Realistic values by field name; undefined leaves it to the schema. */
function hint(field: string): unknown {
  if (rng.chance(0.05)) return hostileValue(rng);
  switch (field) {
    case 'id':
      return pick('td');
    case 'queue':
      return rng.pick(['inbox', 'inbox', 'work', 'nope']);
    case 'session_id':
      return pick('ms');
    case 'message_id':
      return pick('uuid');
    case 'ring_id':
      return pick('rg');
    case 'test_id':
      return pick('dt');
    case 'hook_id':
      return pick('nh');
    case 'cursor':
      return rng.chance(0.5) ? pick('td') : hostileString(rng);
    case 'url':
      return rng.pick([
        'https://93.184.216.34/hook',
        'https://example.invalid/x',
        'http://93.184.216.34/',
        'https://127.0.0.1/',
      ]);
    case 'tz':
      return rng.pick(['UTC', 'Europe/London', 'Asia/Kathmandu', 'Mars/Olympus']);
    case 'start':
      return rng.pick(['00:00', '09:30', '23:59', '24:00']);
    case 'for':
      return rng.pick(['90m', '2h', '1m', '8h']);
    case 'lease_seconds':
      return rng.pick([5, 60, 300, 86_400]);
    case 'wait_seconds':
      // A waiting call answers at its deadline when nothing comes: keep the run short.
      return rng.pick([0, 0, 0, 1]);
    case 'content':
      return `message ${rng.int(0, 1e6)}`;
    case 'title':
      return `fuzz ${rng.int(0, 1e6)}`;
    case 'idempotency_key':
      return `k${rng.int(0, 10)}`;
    case 'max_in_flight':
      return rng.pick([null, 0, 1, 3]);
    // ask_human (docs/design/ask-human.md): a real question, choices or none, the bounds of the timeout.
    case 'question':
      return rng.chance(0.8) ? `deploy ${rng.int(0, 1e6)}?` : hostileString(rng);
    case 'choices':
      return rng.pick([undefined, ['yes', 'no'], ['a', 'b', 'c'], ['only one'], []]);
    case 'timeout_seconds':
      return rng.pick([undefined, 60, 3600, 59, 8 * 86_400]);
    // create_todo's hand-off (docs/design/handoff.md): a granted target, others that are not, a parent, a reply.
    case 'endpoint':
      return rng.pick([sibling.slug, sibling.slug, foreign.slug, main.slug, 'no-such-endpoint', undefined]);
    case 'parent_id':
      return rng.chance(0.8) ? pick('td') : hostileString(rng);
    case 'reply':
      return rng.chance(0.5);
    case 'max_claims_per_window':
      return rng.pick([null, 0, 2, 50]);
    default:
      return undefined;
  }
}

function args(schema: Schema): unknown {
  const valid = validFrom(schema, rng, (field) => hint(field));
  const made = rng.chance(0.4) ? valid : mutate(valid, rng, pools.all());
  // A waiting call answers at its deadline when nothing comes: a valid wait past a second
  // (a hostile value or a mutation drew 50) only holds the run, and past the send's 30 s
  // it read as no answer. Out-of-range and non-integer waits stay, to be refused.
  if (made !== null && typeof made === 'object' && !Array.isArray(made)) {
    const fields = made as Record<string, unknown>;
    const wait = fields.wait_seconds;
    if (typeof wait === 'number' && Number.isInteger(wait) && wait > 1 && wait <= MAX_WAIT_SECONDS) {
      fields.wait_seconds = 1;
    }
  }
  return made;
}

type Target = { credential: string | undefined; session: string | undefined; endpoint: Vended | null };

function target(): Target {
  const endpoint = rng.weighted<Vended>([
    [70, main],
    [10, sibling],
    [10, foreign],
    [10, bare],
  ]);
  const own = sessions.get(endpoint) ?? [];
  const credential = rng.weighted<string | undefined>([
    [94, endpoint.credential],
    [2, undefined],
    [2, 'sbk_not_a_real_credential'],
    [2, rng.pick([main, foreign]).credential],
  ]);
  const session = rng.weighted<string | undefined>([
    [92, own.length > 0 ? rng.pick(own) : undefined],
    [3, undefined],
    [3, rng.pick(pools.get('ms'))],
    [2, hostileString(rng).replace(/[^\x21-\x7e]/g, 'x') || 'x'],
  ]);
  return { credential, session, endpoint };
}

/** The JSON-RPC request: a well-formed tools/call mostly, otherwise a mutated envelope. */
function envelope(name: string, toolArgs: unknown): unknown {
  const id = rng.weighted<unknown>([
    [85, rng.int(1, 1e6)],
    [8, 1.5],
    [2, `req-${rng.int(0, 99)}`],
    [2, null],
    [1, { a: 1 }],
    [1, 2 ** 60],
  ]);
  const good = { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: toolArgs } };
  if (rng.chance(0.85)) return good;
  return rng.pick<() => unknown>([
    () => ({ ...good, jsonrpc: '1.0' }),
    () => ({ ...good, method: rng.pick(['tools/list', 'tools/calls', 'resources/list', 'ping', 'initialize', '']) }),
    () => ({ ...good, params: { name: hostileString(rng), arguments: toolArgs } }),
    () => ({ ...good, params: [name, toolArgs] }),
    () => ({ ...good, params: { name, arguments: toolArgs, _meta: rng.pick([null, 'x', { progressToken: 1 }]) } }),
    () => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
    () => [good, good],
    () => [],
    () => ({ jsonrpc: '2.0', id: 1, result: {} }),
    () => mutate(good, rng, pools.all()),
  ])();
}

function headers(t: Target): Record<string, string> {
  const out: Record<string, string> = { ...MCP_HEADERS };
  if (t.credential) out.authorization = `Bearer ${t.credential}`;
  if (t.session) out['mcp-session-id'] = t.session;
  if (rng.chance(0.1)) {
    rng.pick<() => void>([
      () => (out.accept = 'application/json'),
      () => (out.accept = 'text/event-stream'),
      () => delete out.accept,
      () => (out['content-type'] = 'text/plain'),
      () => (out['mcp-protocol-version'] = rng.pick(['2025-06-18', '1999-01-01', 'x'])),
    ])();
  }
  return out;
}

// ---- the oracle -------------------------------------------------------------------------

interface RpcMessage {
  error?: { code?: number; message?: string };
  result?: { isError?: boolean; content?: unknown; structuredContent?: unknown };
}

interface ToolErrorBody {
  code?: unknown;
  message?: unknown;
  field?: unknown;
}

/**
 * The `error` of an isError result: the JSON text of content[0] (an error carries no
 * structuredContent, which SDK clients would check against the tool's outputSchema).
 */
function toolErrorOf(result: RpcMessage['result']): ToolErrorBody | undefined {
  const first = Array.isArray(result?.content) ? (result.content[0] as { text?: unknown } | undefined) : undefined;
  if (typeof first?.text !== 'string') return undefined;
  try {
    return (JSON.parse(first.text) as { error?: ToolErrorBody }).error;
  } catch {
    return undefined;
  }
}

/** A fixed ceiling's refusal gets an outcome of its own, which the raised pass does not count. */
const FIXED = 'resource_exhausted (fixed ceiling)';

function judge(answer: Answer): string | null {
  if (answer.status === 0) return `no answer: ${answer.text}`;
  if (answer.status >= 500) return `status ${answer.status}`;
  if (
    answer.status === 401 ||
    (answer.status >= 400 && answer.json?.error?.code !== undefined && typeof answer.json.error.code === 'string')
  ) {
    const error = answer.json?.error;
    if (typeof error?.code !== 'string' || !statusFits(error.code, answer.status))
      return 'HTTP error not in the documented shape';
  }
  for (const m of rpcMessages(answer) as RpcMessage[]) {
    if (m.error?.code === -32603) return `JSON-RPC internal error: ${m.error.message}`;
    const result = m.result;
    if (result?.isError) {
      const error = toolErrorOf(result);
      if (typeof error?.code !== 'string' || typeof error.message !== 'string')
        return 'tool error not in the documented shape';
      if (result.structuredContent !== undefined) return 'tool error with structuredContent';
      if (error.code === 'internal') return 'tool error internal';
      if (error.code === 'invalid_argument' && typeof error.field !== 'string') {
        return 'invalid_argument naming no field';
      }
    }
  }
  return null;
}

// ---- the run ----------------------------------------------------------------------------

const findings: Finding[] = [];
const outcomes = new Map<string, number>();

/** Generates case n (synchronously, in order: the seed decides it) and returns its run. */
function prepare(n: number): () => Promise<() => Promise<void>> {
  const verb = rng.pick(TOOLS);
  const t = target();
  const toolArgs = args(verb.inputSchema);
  const body = rng.chance(0.04) ? garbageText(rng) : encode(envelope(verb.name, toolArgs), rng);
  const method = rng.chance(0.02) ? rng.pick(['DELETE', 'PUT', 'PATCH']) : 'POST';
  const sent: Sent = { method, path: '/mcp', headers: headers(t), body };
  return async () => {
    const answer = await send(world.base, sent);
    return () => settle(n, verb.name, t, sent, answer);
  };
}

/** Judges one answer and harvests from it (in case order, after its batch has run). */
async function settle(n: number, verb: string, t: Target, sent: Sent, answer: Answer): Promise<void> {
  const method = sent.method;
  const problem = judge(answer);
  if (problem) {
    findings.push({
      case: n,
      key: `${problem.slice(0, 80)} @ ${verb}`,
      surface: 'mcp',
      problem,
      request: describeSent(sent),
      answer: answer.text.slice(0, 300),
    });
  }
  const messages = rpcMessages(answer) as RpcMessage[];
  const result = messages[0]?.result;
  const outcome =
    answer.status !== 200
      ? `http ${answer.status}`
      : result?.isError
        ? fixedCeiling(toolErrorOf(result))
          ? FIXED
          : String(toolErrorOf(result)?.code)
        : result
          ? 'ok'
          : 'rpc error';
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  for (const m of messages) pools.harvest(m.result?.structuredContent);
  // A session a case closed (DELETE /mcp) is replaced, so the run keeps its sessions live.
  if (method === 'DELETE' && answer.status === 200 && t.endpoint && t.session) {
    const list = sessions.get(t.endpoint) ?? [];
    const i = list.indexOf(t.session);
    if (i >= 0) list.splice(i, 1, await openSession(world, t.endpoint.credential));
  }
}

/** Cases in flight at once: the server's own concurrency is exercised, and a loaded machine is used. */
const BATCH = 6;

test('the verb registry describes every grantable and self verb, each with an object schema', () => {
  assert.deepEqual(TOOLS.map((t) => t.name).sort(), [...allVerbs(), ...SELF_VERBS].sort());
  for (const t of TOOLS) assert.equal(t.inputSchema.type, 'object', t.name);
});

/** Runs `count` cases numbered from `from` against the world's current instance, then the oracle. */
async function runPass(pass: 'raised' | 'defaults', from: number, count: number): Promise<void> {
  usePass(world, pass);
  outcomes.clear();
  const end = from + count;
  for (let n = from; n < end; n += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, end - n) }, (_, i) => prepare(n + i));
    const judged = await Promise.all(batch.map((run) => run()));
    for (const j of judged) await j();
  }
  process.stdout.write(`mcp fuzz outcomes (${pass}): ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}\n`);
  const whoami = await tool(world, main.credential, await openSession(world, main.credential), 'whoami', {});
  assert.equal(whoami?.endpoint?.id, main.id, 'the server still answers a verb');
  const broken = await violations(world.db.pool);
  process.stdout.write(`mcp fuzz: ${await invariantCount(world.db.pool)} invariants checked\n`);
  assert.equal(findings.length, 0, `seed ${seed}:\n${summarize(findings)}`);
  assert.deepEqual(broken, [], `seed ${seed}`);
  const exhausted = (outcomes.get('resource_exhausted') ?? 0) + (outcomes.get('http 429') ?? 0);
  checkExhausted('mcp', pass, exhausted, count);
}

test(`MCP fuzz: ${CASES} cases with the limits raised, no 5xx or internal errors, invariants hold`, async () => {
  await runPass('raised', 0, CASES);
});

test(`MCP fuzz: ${DEFAULT_CASES} more cases with the default limits, the same oracle`, async () => {
  await runPass('defaults', CASES, DEFAULT_CASES);
});
