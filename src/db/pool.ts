// The connection pool and the transaction helper. Only db/ and store/ import pg.
// A URL with several hosts (or a target_session_attrs) gets a pool whose new connections
// pick their host through ./connect.ts; a plain one-host URL gets node-postgres's pool as is.

import pg from 'pg';
import { Hosts, NoFittingHostError } from './connect.js';
import { GENERIC_PLANS, routeNamedStatements } from './generic-share.js';
import { databaseProblem } from './unavailable.js';

export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;
export type Pool = pg.Pool;
export type TxClient = pg.PoolClient;

// timestamptz and jsonb already parse; int8 (counts) would arrive as strings. Counts here
// stay far below 2^53, so numbers are the honest type.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

export interface PoolOptions {
  url: string;
  max: number;
  applicationName?: string;
  /**
   * statement_timeout of every connection, in ms; 0 or unset: none set here. Each
   * connection is opened with it, so it holds for every statement the pool runs.
   * Migrations and the embedded bootstrap use their own clients and are not limited.
   */
  statementTimeoutMs?: number;
  /** idle_in_transaction_session_timeout of every connection, in ms; 0 or unset: none set here. */
  idleInTransactionTimeoutMs?: number;
  /**
   * lock_timeout of every connection, in ms; 0 or unset: none set here. A statement waiting
   * longer for a row or table lock fails with 55P03 (answered `unavailable`, retryable)
   * instead of holding its request and its pooled connection behind a slow transaction.
   * The sweeps share the pool and so the limit: a sweep that loses a lock wait loses its
   * tick and runs again on the next. Migrations (their own client) wait as long as needed.
   */
  lockTimeoutMs?: number;
  /**
   * How long one host may take to give a connection, in ms (SWITCHBOARD_DB_CONNECT_TIMEOUT;
   * default ./connect.ts's DEFAULT_CONNECT_TIMEOUT_MS). With several hosts, a checkout
   * whose host did not answer in time moves on to the next host.
   */
  connectTimeoutMs?: number;
  /**
   * The URL is a transaction pooler (PgBouncer pool_mode=transaction): consecutive
   * statements may run on different server connections. So no named prepared statements
   * (a name is dropped: the statement is prepared unnamed, each time) and no timeouts in
   * the startup packet (PgBouncer refuses unknown startup parameters); the operator sets
   * those on the role instead (docs/deploy.md, "High availability and poolers").
   */
  transactionPooler?: boolean;
  /**
   * Connections of the `max` kept for the named statements marked generic (./prepared.ts)
   * run on the pool itself (routeNamedStatements); 0 or unset: one pool for all. The server
   * sets it (namedShareOf); a pool made for one job (a test, a bench) keeps `max` whole.
   */
  namedShare?: number;
  /**
   * Tracing on: a span per statement run while a span is active (docs/design/tracing.md,
   * "SQL"). Absent: the pool and its clients are left exactly as pg made them.
   */
  queries?: QueryObserver | null;
}

/** What the pool tells about each statement (src/tracing/ implements it; db/ knows no tracing). */
export interface QueryObserver {
  /** Called as a statement is sent; null: nothing to tell when it ends (no active span). */
  start(text: string): { end(error?: unknown): void } | null;
  /** Binds a checkout callback to the caller's context. */
  bind<F extends (...args: never[]) => unknown>(fn: F): F;
}

/**
 * The pool: up to `max` connections; with `namedShare`, that many of them serve the named
 * statements marked generic run on the pool itself (see routeNamedStatements), and
 * the rest everything else. Behind a transaction pooler there are no names, so one pool of
 * `max` serves everything.
 */
export function createPool(options: PoolOptions): pg.Pool {
  const named = options.namedShare ?? 0;
  if (options.transactionPooler || named < 1 || named >= options.max) return createOnePool(options);
  const pool = createOnePool({ ...options, max: options.max - named });
  routeNamedStatements(pool, createOnePool({ ...options, max: named }, GENERIC_PLANS));
  return pool;
}

/** A pg-pool onConnect hook: runs `sql` on a new client before the pool hands it out. */
type OnConnect = (client: pg.ClientBase) => Promise<void>;

function createOnePool(options: PoolOptions, onConnectSql?: string): pg.Pool {
  // An old server without the setting keeps its default; a broken connection fails its checkout's statement.
  const onConnect: OnConnect | undefined = onConnectSql
    ? (client) =>
        client.query(onConnectSql).then(
          () => undefined,
          () => undefined,
        )
    : undefined;
  const hosts = Hosts.fromUrl(options.url, options.connectTimeoutMs);
  const selecting = hosts.count > 1 || hosts.target.attrs !== 'any';
  const Pool = selecting ? selectingPool(hosts) : pg.Pool;
  const pool = new Pool({
    ...(selecting ? {} : { connectionString: options.url, Client: timedClient(hosts.connectTimeoutMs) }),
    // pg-pool awaits the hook's promise; pg's types call it a void function.
    ...(onConnect ? { onConnect: onConnect as unknown as (client: pg.ClientBase) => void } : {}),
    max: options.max,
    application_name: options.applicationName ?? 'switchboard',
    // A connection that cannot be had in 10 s means the database is down or saturated;
    // failing lets the caller answer `unavailable` instead of hanging a request. pg-pool
    // hands this to each new client too; the clients here replace it with the per-host
    // timeout, which stays below it so that a silent host fails (and, with several hosts,
    // the next is tried) before the checkout as a whole does.
    connectionTimeoutMillis: Math.max(CHECKOUT_TIMEOUT_MS, hosts.connectTimeoutMs + 1_000),
    idleTimeoutMillis: 30_000,
    // Sent in the startup packet, so the server applies them before the first statement
    // with no extra round trip; 0 sends nothing and the database's own default holds.
    // (Not `options: '-c …'`: an `options` in the database URL would replace it.)
    ...(options.transactionPooler
      ? {}
      : {
          statement_timeout: options.statementTimeoutMs || undefined,
          idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs || undefined,
          lock_timeout: options.lockTimeoutMs || undefined,
        }),
  });
  if (options.transactionPooler) unnameStatements(pool);
  // An idle client losing its connection (PostgreSQL restart) must not crash the
  // process; the pool discards it and the next checkout connects afresh.
  pool.on('error', () => undefined);
  if (options.queries) observeQueries(pool, options.queries);
  return pool;
}

/** The pool's checkout limit (see createPool); longer only when the per-host timeout is. */
const CHECKOUT_TIMEOUT_MS = 10_000;

/** pg.Client with the per-host connect timeout instead of the pool's checkout limit. */
function timedClient(connectTimeoutMs: number): typeof pg.Client {
  return class TimedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  };
}

type QueryFn = (...args: unknown[]) => unknown;
type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * A pool whose clients each connect to one host of `hosts` (the last good one first) and
 * are checked by role before use (pg-pool's onConnect hook); a checkout whose connection
 * failed or landed on the wrong kind of server is retried on the next host, once per host.
 * Connections that error later are discarded by the pool as always, so after a failover
 * the next checkouts re-run the selection and find the new primary.
 */
function selectingPool(hosts: Hosts): typeof pg.Pool {
  /** Errors of establishing a connection (so: try another host), told from pool-level ones. */
  const hostFailures = new WeakSet<object>();
  const note = (err: unknown, index: number) => {
    hosts.failed(index);
    if (typeof err === 'object' && err !== null) hostFailures.add(err);
  };
  class SelectingClient extends pg.Client {
    readonly hostIndex: number;
    constructor(config?: pg.ClientConfig) {
      const index = hosts.order()[0] ?? 0;
      super({ ...config, connectionTimeoutMillis: hosts.connectTimeoutMs, connectionString: hosts.target.urls[index] });
      this.hostIndex = index;
    }
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error) => void): void;
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | void {
      if (!callback) return super.connect();
      super.connect((err: Error) => {
        if (err) note(err, this.hostIndex);
        callback(err);
      });
    }
  }
  const onConnect = async (client: SelectingClient) => {
    try {
      await hosts.check(client, client.hostIndex);
      hosts.worked(client.hostIndex);
    } catch (err) {
      note(err, client.hostIndex);
      throw err;
    }
  };
  return class SelectingPool extends pg.Pool {
    constructor(config: pg.PoolConfig) {
      const then = (config as { onConnect?: OnConnect }).onConnect;
      const checked = then ? async (c: SelectingClient) => (await onConnect(c), await then(c)) : onConnect;
      super({ ...config, Client: SelectingClient, onConnect: checked } as unknown as pg.PoolConfig);
    }
    override connect(): Promise<pg.PoolClient>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
      if (!callback) {
        return new Promise((resolve, reject) => {
          this.connect((err, client) => (err || !client ? reject(err ?? new Error('no client')) : resolve(client)));
        });
      }
      const reasons: string[] = [];
      const attempt = () => {
        super.connect((err, client, done) => {
          // pg-pool rewraps a connect that its own timer cut short; the host's error is the cause.
          const failure = err && (hostFailures.has(err) || hostFailures.has((err as { cause?: object }).cause ?? {}));
          if (err && failure && !this.ending) {
            reasons.push(err.message);
            if (reasons.length < hosts.count) return attempt();
            if (hosts.count > 1) {
              const why = `no host gave a ${hosts.target.attrs} session (${reasons.join('; ')})`;
              return callback(new NoFittingHostError(why, { cause: err }), undefined, () => undefined);
            }
          }
          callback(err, client, done);
        });
      };
      attempt();
    }
  };
}

/**
 * Wraps each new client's query (pool.query goes through a checked-out client too, so
 * this sees every pooled statement, inside transactions included) and binds checkout
 * callbacks to the caller: pg-pool hands a released client straight to a waiting
 * checkout from inside the releaser's call, which would otherwise hang the waiter's
 * statements under the releaser's span.
 */
function observeQueries(pool: pg.Pool, observer: QueryObserver): void {
  const connect = pool.connect.bind(pool) as QueryFn;
  (pool as { connect: QueryFn }).connect = (...args: unknown[]) => {
    const last = args.length - 1;
    if (typeof args[last] === 'function') args[last] = observer.bind(args[last] as QueryFn);
    return connect(...args);
  };
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as QueryFn;
    (client as { query: QueryFn }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text?: unknown; submit?: unknown } | undefined;
      const text = typeof first === 'string' ? first : first?.text;
      // A Submittable (a cursor, a stream) manages its own life: left untraced.
      if (typeof text !== 'string' || (typeof first === 'object' && typeof first.submit === 'function')) {
        return query(...args);
      }
      const span = observer.start(text);
      if (!span) return query(...args);
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (err: unknown, res: unknown) => {
          span.end(err ?? undefined);
          (callback as QueryFn)(err, res);
        };
        return query(...args);
      }
      return (query(...args) as Promise<unknown>).then(
        (res) => {
          span.end();
          return res;
        },
        (err: unknown) => {
          span.end(err);
          throw err;
        },
      );
    };
  });
}

/**
 * Drops the `name` of every statement config on each new client: node-postgres prepares a
 * named statement once per connection and then only binds it, which behind a transaction
 * pooler reaches a server connection that never saw it ("prepared statement does not
 * exist"). The texts are unchanged, so behaviour is too; each statement is parsed anew.
 */
function unnameStatements(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as QueryFn;
    (client as { query: QueryFn }).query = (...args: unknown[]) => {
      const first = args[0];
      if (typeof first === 'object' && first !== null && 'name' in first && !('submit' in first)) {
        const { name: _name, ...unnamed } = first as { name?: unknown };
        args[0] = unnamed;
      }
      return query(...args);
    };
  });
}

/**
 * Checks a client out with an error listener attached in the checkout callback itself.
 * pg-pool can hand a released client straight to a waiting checkout while it is still
 * parsing that socket's data; if the backend's FATAL (a terminated backend, a restart) is
 * in the same read, the client emits 'error' at once. Awaiting pool.connect() would attach
 * the listener a microtask too late, and an unheard 'error' event kills the process.
 */
function checkout(
  pool: pg.Pool,
): Promise<{ client: pg.PoolClient; broken: () => Error | undefined; done: () => void }> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      if (err || !client) {
        reject(err ?? new Error('the pool gave no client'));
        return;
      }
      let broken: Error | undefined;
      const lost = (e: Error) => {
        broken = e;
      };
      client.on('error', lost);
      resolve({ client, broken: () => broken, done: () => client.removeListener('error', lost) });
    });
  });
}

/**
 * Whether a failed statement means this connection should not be handed out again: it
 * broke, or its server went read-only under it (25006: a primary being demoted, or
 * default_transaction_read_only turned on) and the next connection should pick a host anew.
 */
function discard(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '25006' || databaseProblem(err) !== null;
}

/** Runs fn in one transaction; rolls back on any throw and rethrows. */
export async function withTx<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  // A connection lost between two statements (a PostgreSQL restart) fails the next
  // statement instead of crashing the process, and the transaction rolls back.
  const { client, broken, done } = await checkout(pool);
  let failure: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (discard(err)) failure = err as Error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    done();
    // A broken connection is discarded, not handed to the next caller.
    client.release(broken() ?? failure);
  }
}

/** Checks that the database answers; used by /readyz. */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
