// Fuzzing every /ws action of a real `serve` instance: the actions come from the action
// table (WS_ACTIONS), each driven with valid payloads from per-action seeds that name the
// run's own sessions and entries (and other tenants'), then mutated; frames are also sent
// with mutated envelopes, as invalid JSON, as JSON that is not an object, and as binary.
// Connections are opened signed in (two humans' board cookies), without a cookie and from
// a foreign Origin. The oracle: every frame is answered, no answer is INTERNAL_ERROR, an
// error is `{code, message, details?}`, the socket stays open; afterwards the server
// answers and every CHECK and documented invariant holds. A raised-limits pass (the frame
// limit per socket raised, so frames reach the actions), then a default-limits pass
// (test/fuzz/world.ts).

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { WS_ACTIONS } from '../../src/api/ws-actions.js';
import { boardCookies } from '../../src/http/auth.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { Pools, send, summarize, type Finding } from './http.js';
import { invariantCount, violations } from './invariants.js';
import { casesFor, fuzzSeed, Rng } from './rng.js';
import { encode, garbageText, hostileString, mutate } from './values.js';
import {
  call,
  checkExhausted,
  fixedCeiling,
  defaultPassCases,
  makePeople,
  MCP_HEADERS,
  openSession,
  PASSWORD,
  startWorld,
  usePass,
  vendEndpoint,
} from './world.js';

const seed = fuzzSeed();
const CASES = casesFor('ws');
const DEFAULT_CASES = defaultPassCases(CASES);
process.stdout.write(
  `ws fuzz: seed ${seed} (replay: SWITCHBOARD_FUZZ_SEED=${seed}), ${CASES} cases + ${DEFAULT_CASES} with default limits\n`,
);
const rng = new Rng(seed, 'ws');

const world = await startWorld('fuzz_ws');
const { admin, other } = await makePeople(world);
const mine = await vendEndpoint(world, admin, { name: 'fuzz ws mine', queues: ['inbox'] });
const theirs = await vendEndpoint(world, other, { name: 'fuzz ws theirs', queues: ['inbox'] });
const pools = new Pools();
const mySessions = [await openSession(world, mine.credential), await openSession(world, mine.credential)];
const theirSessions = [await openSession(world, theirs.credential)];
for (const s of [...mySessions, ...theirSessions]) pools.add('ms', s);
for (const s of mySessions) {
  for (let i = 0; i < 3; i++)
    pools.harvest((await call(world, 'POST', `/api/v1/sessions/${s}/queue`, admin.control, { content: `m${i}` })).json);
}
// A closed session: its queue is gone, and every action on it must answer NOT_FOUND.
const closed = await openSession(world, mine.credential);
pools.add('ms', closed);
await send(world.base, {
  method: 'DELETE',
  path: '/mcp',
  headers: { ...MCP_HEADERS, authorization: `Bearer ${mine.credential}`, 'mcp-session-id': closed },
  body: undefined,
});

const identity = { db: world.db.pool, publicUrl: world.base };
const SESSION_COOKIE = boardCookies(world.base).session;
const cookies = {
  admin: (await signIn(identity, admin.email, PASSWORD)).cookie,
  other: (await signIn(identity, other.email, PASSWORD)).cookie,
};

// ---- sockets ----------------------------------------------------------------------------

interface RawSocket {
  on(event: 'open' | 'close', listener: (code?: number) => void): void;
  on(event: 'message', listener: (data: unknown) => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'unexpected-response', listener: (req: unknown, res: { statusCode?: number }) => void): void;
  send(data: string | Buffer): void;
  close(): void;
  readyState: number;
}

/** Opens /ws; resolves with the socket, or with the HTTP status that refused it. */
function open(headers: Record<string, string>): Promise<RawSocket | number> {
  const socket = new WebSocket(`${world.base.replace(/^http/, 'ws')}/ws`, { headers }) as unknown as RawSocket;
  return new Promise((resolve) => {
    socket.on('open', () => resolve(socket));
    socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.on('error', () => resolve(0));
  });
}

interface Conn {
  socket: RawSocket;
  who: 'admin' | 'other';
  answers: unknown[];
  waiting: ((frame: unknown) => void) | null;
  closedWith: number | null;
}

async function connect(who: 'admin' | 'other'): Promise<Conn> {
  const socket = await open({ cookie: `${SESSION_COOKIE}=${cookies[who]}` });
  assert.ok(typeof socket !== 'number', `open /ws as ${who}: ${String(socket)}`);
  const conn: Conn = { socket, who, answers: [], waiting: null, closedWith: null };
  socket.on('message', (data) => {
    let frame: unknown;
    try {
      frame = JSON.parse(String(data));
    } catch {
      frame = { unparsable: String(data).slice(0, 200) };
    }
    if ((frame as { type?: unknown }).type === 'notification') return;
    const resolve = conn.waiting;
    conn.waiting = null;
    resolve?.(frame);
  });
  socket.on('close', (code) => {
    conn.closedWith = code ?? 0;
    conn.waiting?.(null);
  });
  after(() => socket.close());
  return conn;
}

/** Sends a frame and waits for its answer (null: the socket closed; 'timeout': none came). */
function exchange(conn: Conn, data: string | Buffer): Promise<unknown> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      conn.waiting = null;
      resolve('timeout');
    }, 10_000);
    conn.waiting = (frame) => {
      clearTimeout(timer);
      resolve(frame);
    };
    conn.socket.send(data);
  });
}

// ---- generation -------------------------------------------------------------------------

const ACTIONS = Object.keys(WS_ACTIONS);

function session(): string {
  return rng.weighted<() => string>([
    [8, () => rng.pick(mySessions)],
    [2, () => rng.pick(theirSessions)],
    [1, () => closed],
    [1, () => rng.pick(pools.all())],
    [1, () => hostileString(rng)],
  ])();
}

function entry(): string {
  const own = pools.get('uuid');
  return own.length > 0 && rng.chance(0.8) ? rng.pick(own) : hostileString(rng);
}

/** A valid payload of the action (the use cases' own zod schemas, see src/domain/messages.ts). */
function seedPayload(action: string): Record<string, unknown> | undefined {
  switch (action) {
    case 'message.queue.add':
      return { session_id: session(), content: `ws ${rng.int(0, 1e6)}` };
    case 'message.queue.update':
      return { session_id: session(), entry_id: entry(), content: `edited ${rng.int(0, 1e6)}` };
    case 'message.queue.remove':
      return { session_id: session(), entry_id: entry() };
    case 'message.queue.reorder':
      return { session_id: session(), entry_ids: pools.get('uuid').slice(-rng.int(0, 4)) };
    case 'message.queue.cancel':
    case 'message.queue.get':
    case 'message.queue.subscribe':
      return { session_id: session() };
    default:
      return undefined;
  }
}

function frame(): string | Buffer {
  const roll = rng.next();
  if (roll < 0.06) return garbageText(rng);
  if (roll < 0.09) return rng.pick(['null', '7', '"text"', '[]', '[{"action":"message.queue.get"}]', 'true']);
  const action = rng.chance(0.95)
    ? rng.pick(ACTIONS)
    : rng.pick(['message.queue.nope', '', 'constructor', '__proto__', 'toString']);
  const valid = seedPayload(action) ?? {};
  const payload = rng.chance(0.4) ? valid : mutate(valid, rng, pools.all());
  const envelope: Record<string, unknown> = { id: rng.int(1, 1e9), type: 'request', action, payload };
  if (rng.chance(0.1)) return encode(mutate(envelope, rng, pools.all()), rng);
  return encode(envelope, rng);
}

// ---- the oracle and the run --------------------------------------------------------------

function judge(answer: unknown, conn: Conn): string | null {
  if (answer === 'timeout') return 'no answer within 10 s';
  if (answer === null) return `socket closed (${conn.closedWith})`;
  const a = answer as { type?: unknown; payload?: { code?: unknown; message?: unknown } };
  if (a.type === 'response') return null;
  if (a.type !== 'error') return `answer of type ${String(a.type)}`;
  if (typeof a.payload?.code !== 'string' || typeof a.payload.message !== 'string')
    return 'error not in the documented shape';
  if (a.payload.code === 'INTERNAL_ERROR') return 'INTERNAL_ERROR';
  const details = (a.payload as { details?: { field?: unknown } }).details;
  if (a.payload.code === 'VALIDATION_ERROR' && typeof details?.field !== 'string') {
    // Only a frame that is not JSON at all has no field to name.
    if (a.payload.message !== 'not JSON') return 'VALIDATION_ERROR naming no field';
  }
  return null;
}

const findings: Finding[] = [];
const outcomes = new Map<string, number>();
const conns: Conn[] = [];

async function live(who: 'admin' | 'other'): Promise<Conn> {
  // Several sockets per human: each has its own rate limit, so even the default-limits pass
  // is not throttled throughout.
  const open = conns.filter((c) => c.who === who && c.closedWith === null);
  if (open.length >= 4) return rng.pick(open);
  const conn = await connect(who);
  conns.push(conn);
  return conn;
}

async function oneCase(n: number): Promise<void> {
  if (rng.chance(0.02)) {
    // Connection-level cases: no cookie, a foreign Origin, a bogus cookie.
    const headers = rng.pick<Record<string, string>>([
      {},
      { cookie: `${SESSION_COOKIE}=${cookies.admin}`, origin: 'https://evil.example' },
      { cookie: `${SESSION_COOKIE}=bogus` },
      { cookie: `${SESSION_COOKIE}=${hostileString(rng).replace(/[^\x21-\x7e]/g, 'x')}` },
    ]);
    const refused = await open(headers);
    // 431: a cookie over Node's 16 KiB header limit is refused before any route runs.
    const ok = typeof refused === 'number' && [401, 403, 431].includes(refused);
    if (!ok)
      findings.push({
        case: n,
        key: 'connection not refused',
        surface: 'ws',
        problem: 'connection not refused',
        request: JSON.stringify(headers).slice(0, 300),
        answer: String(refused),
      });
    if (typeof refused !== 'number') refused.close();
    return;
  }
  const conn = await live(rng.chance(0.8) ? 'admin' : 'other');
  const data = frame();
  const answer = await exchange(conn, data);
  const problem = judge(answer, conn);
  const a = answer as { type?: string; action?: string; payload?: { code?: string } } | null;
  // A fixed ceiling's refusal gets an outcome of its own, which the raised pass does not count.
  const code = fixedCeiling(a?.payload) ? 'resource_exhausted (fixed ceiling)' : String(a?.payload?.code);
  const outcome = a && typeof a === 'object' ? (a.type === 'error' ? code : String(a.type)) : String(answer);
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  // A frame over the 1 MiB limit closes the socket with 1009: that is the documented limit, not a fault.
  const oversize = Buffer.byteLength(data) > 1024 * 1024 && conn.closedWith === 1009;
  if (problem && !oversize) {
    findings.push({
      case: n,
      key: `${problem} @ ${a?.action ?? 'frame'}`,
      surface: 'ws',
      problem,
      request: String(data).slice(0, 300),
      answer: JSON.stringify(answer).slice(0, 300),
    });
  }
  pools.harvest((a as { payload?: unknown } | null)?.payload);
}

test('every /ws action has a payload seed', () => {
  assert.deepEqual(
    ACTIONS.filter((a) => seedPayload(a) === undefined),
    [],
  );
});

/** Runs `count` cases numbered from `from` on sockets of the world's current instance, then the oracle. */
async function runPass(pass: 'raised' | 'defaults', from: number, count: number): Promise<void> {
  usePass(world, pass);
  // The sockets of the previous pass belong to the other instance.
  for (const c of conns.splice(0)) if (c.closedWith === null) c.socket.close();
  outcomes.clear();
  for (let n = from; n < from + count; n++) await oneCase(n);
  process.stdout.write(`ws fuzz outcomes (${pass}): ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}\n`);
  const conn = await connect('admin');
  const answer = (await exchange(
    conn,
    JSON.stringify({ id: 1, type: 'request', action: 'message.queue.get', payload: { session_id: mySessions[0] } }),
  )) as { type?: string };
  assert.equal(answer?.type, 'response', 'the server still answers on /ws');
  conn.socket.close();
  const broken = await violations(world.db.pool);
  process.stdout.write(`ws fuzz: ${await invariantCount(world.db.pool)} invariants checked\n`);
  assert.equal(findings.length, 0, `seed ${seed}:\n${summarize(findings)}`);
  assert.deepEqual(broken, [], `seed ${seed}`);
  checkExhausted('ws', pass, outcomes.get('resource_exhausted') ?? 0, count);
}

test(`WebSocket fuzz: ${CASES} cases with the limits raised, every frame answered, no INTERNAL_ERROR, invariants hold`, async () => {
  await runPass('raised', 0, CASES);
});

test(`WebSocket fuzz: ${DEFAULT_CASES} more cases with the default limits, the same oracle`, async () => {
  await runPass('defaults', CASES, DEFAULT_CASES);
});
