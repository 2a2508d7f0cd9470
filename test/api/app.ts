// The harness for the /api/v1 tests: the real HTTP app (every surface on the host, from
// the services as `serve` builds them) on a database of the file's own, driven through
// app.inject, and humans created through the real routes.

import assert from 'node:assert/strict';
import { after } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../src/db/pool.js';
import type { Principal } from '../../src/identity/principal.js';
import { ensureSetupLink } from '../../src/identity/setup.js';
import type { Services } from '../../src/services.js';
import { testDatabase } from '../helpers/db.js';
import { testApp, testServices, type ServiceSetup } from '../helpers/services.js';

export const PUBLIC_URL = 'http://switchboard.test:8080';
export const PASSWORD = 'correct horse battery staple';
export const DEFAULT_LEASE_SECONDS = 300;

/** What a client sees of a response: status, headers, the parsed JSON body (if any) and the raw text. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
  body: any;
  text: string;
}

export interface RequestOptions {
  /** An `Authorization: Bearer` value; omitted for none. */
  token?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (with `headers` giving its content type). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

export interface Person {
  human: {
    id: string;
    email: string;
    display_name: string;
    role: 'admin' | 'member';
    state: 'active' | 'disabled';
    created_at: string;
  };
  email: string;
  password: string;
  /** A human-kind API token from POST /api/v1/auth/login. */
  token: string;
  tokenId: string;
}

export class Harness {
  private current: FastifyInstance | null = null;
  /** When set, the app's clock stands still here (rate-limit tests: a slow machine must not refill a bucket). */
  frozenAt: Date | null = null;
  private built: Services | null = null;

  constructor(readonly pool: Pool) {}

  /** Builds the services (once) with the harness's clock. */
  async init(setup: Omit<ServiceSetup, 'pool' | 'clock'> = {}): Promise<this> {
    this.built = await testServices({
      env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL },
      ...setup,
      pool: this.pool,
      clock: () => this.frozenAt ?? new Date(),
    });
    return this;
  }

  get services(): Services {
    assert.ok(this.built, 'call init() first');
    return this.built;
  }

  /** The app under test; `fresh()` replaces it (new rate-limit buckets, same database). */
  get app(): FastifyInstance {
    if (!this.current) this.current = this.build();
    return this.current;
  }

  build(): FastifyInstance {
    return testApp(this.services);
  }

  async fresh(): Promise<void> {
    await this.close();
    this.current = this.build();
  }

  async close(): Promise<void> {
    const app = this.current;
    this.current = null;
    if (app) await app.close();
  }

  async request(method: string, url: string, options: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let payload: string | Buffer | undefined = options.payload;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await this.app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(payload !== undefined ? { payload } : {}),
      ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    });
    let body: unknown;
    try {
      body = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body };
  }

  get(url: string, options?: RequestOptions): Promise<Reply> {
    return this.request('GET', url, options);
  }

  post(url: string, options?: RequestOptions): Promise<Reply> {
    return this.request('POST', url, options);
  }

  delete(url: string, options?: RequestOptions): Promise<Reply> {
    return this.request('DELETE', url, options);
  }

  put(url: string, options?: RequestOptions): Promise<Reply> {
    return this.request('PUT', url, options);
  }
}

/** A migrated database of the file's own and the app on it; closed when the file ends. */
export async function apiHarness(
  label: string,
  syntheticAdmin: (pool: Pool) => Promise<Principal | null> = async () => null,
  env: Record<string, string> = {},
): Promise<Harness> {
  const { pool } = await testDatabase(label);
  const harness = await new Harness(pool).init({
    syntheticAdmin: await syntheticAdmin(pool),
    env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL, ...env },
  });
  after(() => harness.close());
  return harness;
}

/** Asserts the status, showing the body when it differs. */
export function expectStatus(reply: Reply, status: number, label = ''): void {
  assert.equal(reply.status, status, `${label ? `${label}: ` : ''}${reply.status} ${reply.text.slice(0, 500)}`);
}

/** Asserts an error reply: its status, code and (when given) the field it names. */
export function expectError(reply: Reply, status: number, code: string, field?: string, label = ''): void {
  expectStatus(reply, status, label);
  assert.equal(reply.body?.error?.code, code, `${label}: ${reply.text}`);
  assert.equal(typeof reply.body.error.message, 'string', label);
  if (field !== undefined) assert.equal(reply.body.error.details?.field, field, `${label}: ${reply.text}`);
}

/** Signs in through POST /api/v1/auth/login. */
export async function login(h: Harness, email: string, password = PASSWORD): Promise<Person> {
  const res = await h.post('/api/v1/auth/login', { body: { email, password } });
  expectStatus(res, 201, `login ${email}`);
  return { human: res.body.human, email, password, token: res.body.token, tokenId: res.body.token_id };
}

/**
 * The humans of a file, made the way a real install makes them: the setup link creates
 * the admin, who creates a member and a second human; each signs in for a token.
 */
export async function makePeople(h: Harness): Promise<{ admin: Person; member: Person; other: Person }> {
  const link = await ensureSetupLink({ db: h.pool, publicUrl: PUBLIC_URL });
  assert.ok(link, 'a fresh database has no humans, so a setup link is minted');
  const token = link.slice(link.lastIndexOf('/') + 1);
  const setup = await h.post('/api/v1/setup', {
    body: { token, email: 'admin@example.test', password: PASSWORD, display_name: 'Ada Admin' },
  });
  expectStatus(setup, 201, 'setup');
  const admin = await login(h, 'admin@example.test');
  for (const [email, name] of [
    ['member@example.test', 'Mel Member'],
    ['other@example.test', 'Otto Other'],
  ] as const) {
    const res = await h.post('/api/v1/humans', {
      token: admin.token,
      body: { email, display_name: name, password: PASSWORD },
    });
    expectStatus(res, 201, `create ${email}`);
  }
  const member = await login(h, 'member@example.test');
  const other = await login(h, 'other@example.test');
  // Every test gets an app with full rate-limit buckets.
  await h.fresh();
  return { admin, member, other };
}

/** Vends an endpoint for `person` through the API; the 201 body. */
export async function vend(
  h: Harness,
  person: { token: string },
  body: Record<string, unknown> = {},
): Promise<{ endpoint: { id: string; slug: string; queues: string[] } & Record<string, unknown>; credential: string }> {
  const res = await h.post('/api/v1/endpoints', {
    token: person.token,
    body: { name: `agent ${Math.random().toString(36).slice(2, 8)}`, ...body },
  });
  expectStatus(res, 201, 'vend');
  return res.body as Awaited<ReturnType<typeof vend>>;
}

/** Pushes a todo through the API; the todo. */
export async function push(
  h: Harness,
  person: { token: string },
  ref: string,
  body: Record<string, unknown> = {},
): Promise<{ id: string; state: string } & Record<string, unknown>> {
  const res = await h.post(`/api/v1/endpoints/${ref}/todos`, {
    token: person.token,
    body: { queue: 'inbox', title: 'a todo', ...body },
  });
  expectStatus(res, 201, 'push');
  return res.body.todo as Awaited<ReturnType<typeof push>>;
}

const TABLES = [
  'humans',
  'setup_tokens',
  'api_tokens',
  'endpoints',
  'todos',
  'todo_attempts',
  'webhooks',
  'webhook_deliveries',
  'webhook_events',
] as const;

/** Row counts of every table the API writes. */
export async function tableCounts(pool: Pool): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const res = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
    counts[table] = Number(res.rows[0]?.n);
  }
  return counts;
}

/**
 * Every row the API writes, to show that a refused call changed nothing. An API token's
 * last_used_at and expires_at are left out: authenticating the refused call itself may
 * stamp the one and slide the other (docs/design/people.md, "Login tokens expire").
 */
export async function snapshot(pool: Pool): Promise<Record<string, unknown[]>> {
  const rows: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const left = table === 'api_tokens' ? ` - 'expires_at'` : '';
    const res = await pool.query(`SELECT to_jsonb(t) - 'last_used_at'${left} AS row FROM ${table} t ORDER BY 1`);
    rows[table] = res.rows.map((r: { row: unknown }) => r.row);
  }
  return rows;
}

/** The ids of a list in a reply body, in order. */
export function idsOf(list: unknown): string[] {
  return (list as { id: string }[]).map((item) => item.id);
}

/** The item with this id in a list in a reply body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reply bodies are checked field by field
export function byId(list: unknown, id: string): any {
  return (list as { id: string }[]).find((item) => item.id === id);
}

/** A reply's body with every occurrence of `id` replaced, to compare two not_found answers. */
export function withoutId(reply: Reply, id: string): unknown {
  return { status: reply.status, body: JSON.parse(reply.text.split(id).join('<id>')) };
}
