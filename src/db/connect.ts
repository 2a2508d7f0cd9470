// Connecting to one of several hosts (a URL parsed by domain/database-url.ts): each new connection tries
// the hosts in turn, asks the server what it is (`SHOW transaction_read_only`,
// `pg_is_in_recovery()`) and closes a connection that landed on the wrong kind, e.g. a
// standby when read-write is wanted, then tries the next host. The pool (./pool.ts), the
// LISTEN connection (./bus.ts) and migrations (./migrate.ts) all connect through here, so
// after a failover each finds the new primary the way libpq's target_session_attrs would.
//
// A Hosts object remembers the host that answered last and starts there (then the rest in
// the URL's order): a pool of ten does not knock on a standby before every connection,
// and after a failover the first connection that finds the new primary moves everyone.
// It owns no sockets; closing a connection is its owner's business.

import pg from 'pg';
import {
  needsRoleCheck,
  parseDatabaseUrl,
  roleFits,
  type DatabaseTarget,
  type ServerRole,
} from '../domain/database-url.js';

/** The role check: one round trip, both facts (a primary may still be read-only by setting). */
const ROLE_SQL = `SELECT current_setting('transaction_read_only') = 'on' AS read_only, pg_is_in_recovery() AS in_recovery`;

/**
 * No host gave a fitting session. SQLSTATE 08001 (sqlclient_unable_to_establish_sqlconnection),
 * so db/unavailable.ts classes it as an unreachable database: /readyz answers 503 and
 * requests `unavailable` while no writable primary answers.
 */
export class NoFittingHostError extends Error {
  readonly code = '08001';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NoFittingHostError';
  }
}

/** The server a connection landed on does not have the wanted attributes. */
export class WrongRoleError extends Error {
  readonly code = '08001';
  constructor(where: string, wanted: string, role: ServerRole) {
    const is = role.inRecovery ? 'a standby' : role.readOnly ? 'read-only' : 'a writable primary';
    super(`${where} is ${is}; target_session_attrs=${wanted} wants another`);
    this.name = 'WrongRoleError';
  }
}

/**
 * How long one host may take to give a session (TCP, TLS, startup, the role check's
 * connection) before the next is tried: SWITCHBOARD_DB_CONNECT_TIMEOUT's default. A host
 * that is down without refusing (a dead machine, a blackholed route) would otherwise hold
 * every new connection until the pool's checkout gives up, and the next host, the new
 * primary, would never be asked (docs/design/scale-out.md, "The configuration").
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

export class Hosts {
  /** Index of the host that last gave a fitting connection. */
  private preferred = 0;

  constructor(
    readonly target: DatabaseTarget,
    /** Per host and per connection attempt, in ms. */
    readonly connectTimeoutMs: number = DEFAULT_CONNECT_TIMEOUT_MS,
  ) {}

  /** Parses `url`; throws when it is not a database URL (config checked it already). */
  static fromUrl(url: string, connectTimeoutMs?: number): Hosts {
    const parsed = parseDatabaseUrl(url);
    if (!parsed.ok) throw new Error(`database URL: ${parsed.problem}`);
    return new Hosts(parsed.target, connectTimeoutMs);
  }

  /**
   * Like fromUrl, for a connection that must write or LISTEN: with several hosts, `any`
   * becomes `read-write` (a standby refuses LISTEN, and the bus must hear the primary).
   */
  static forWriting(url: string, connectTimeoutMs?: number): Hosts {
    const hosts = Hosts.fromUrl(url, connectTimeoutMs);
    if (hosts.count < 2 || hosts.target.attrs !== 'any') return hosts;
    return new Hosts({ ...hosts.target, attrs: 'read-write' }, connectTimeoutMs);
  }

  get count(): number {
    return this.target.urls.length;
  }

  /** Host indexes in the order a new connection tries them: the last good one first. */
  order(): number[] {
    const n = this.count;
    return Array.from({ length: n }, (_, i) => (this.preferred + i) % n);
  }

  /** The host at `index` gave a fitting connection: later connections start there. */
  worked(index: number): void {
    this.preferred = index;
  }

  /** The host at `index` failed: if it was the preferred one, the next takes its place. */
  failed(index: number): void {
    if (this.preferred === index) this.preferred = (index + 1) % this.count;
  }

  /** host:port of one host, without credentials. */
  describe(index: number): string {
    const h = this.target.hosts[index];
    if (!h) return this.target.where;
    return h.host.startsWith('/')
      ? `${h.host}:${h.port}`
      : `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`;
  }

  /** Throws WrongRoleError unless the freshly connected client's server fits (pass 1 or 2). */
  async check(client: pg.Client, index: number, pass: 1 | 2 = 1): Promise<void> {
    const { attrs } = this.target;
    if (!needsRoleCheck(attrs)) return;
    const { rows } = await client.query<{ read_only: boolean; in_recovery: boolean }>(ROLE_SQL);
    const role = { readOnly: rows[0]?.read_only === true, inRecovery: rows[0]?.in_recovery === true };
    if (!roleFits(attrs, role, pass)) throw new WrongRoleError(this.describe(index), attrs, role);
  }
}

/**
 * A connected pg.Client on the first host that fits. `config` is everything but where to
 * connect (application_name, timeouts…); each host gets hosts.connectTimeoutMs unless
 * `config` says otherwise. Each failed attempt's client is closed; when none
 * fits, NoFittingHostError says why for each host.
 */
export async function connectClient(hosts: Hosts, config: pg.ClientConfig = {}): Promise<pg.Client> {
  const reasons: string[] = [];
  let last: unknown;
  const passes: Array<1 | 2> = hosts.target.attrs === 'prefer-standby' ? [1, 2] : [1];
  for (const pass of passes) {
    for (const index of hosts.order()) {
      const client = new pg.Client({
        connectionTimeoutMillis: hosts.connectTimeoutMs,
        ...config,
        connectionString: hosts.target.urls[index],
      });
      // An 'error' while connecting also rejects connect(); unheard, it would kill the process.
      client.on('error', () => undefined);
      try {
        await client.connect();
        await hosts.check(client, index, pass);
        hosts.worked(index);
        return client;
      } catch (err) {
        last = err;
        hosts.failed(index);
        reasons.push(`${hosts.describe(index)}: ${(err as Error).message}`);
        await client.end().catch(() => undefined);
      }
    }
  }
  if (hosts.count === 1) throw last;
  throw new NoFittingHostError(`no host gave a ${hosts.target.attrs} session (${reasons.join('; ')})`, { cause: last });
}
