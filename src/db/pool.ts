// The connection pool and the transaction helper. Only db/ and store/ import pg.

import pg from 'pg';

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

export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max,
    application_name: options.applicationName ?? 'switchboard',
    // A connection that cannot be had in 10 s means the database is down or saturated;
    // failing lets the caller answer `unavailable` instead of hanging a request.
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // Sent in the startup packet, so the server applies them before the first statement
    // with no extra round trip; 0 sends nothing and the database's own default holds.
    // (Not `options: '-c …'`: an `options` in the database URL would replace it.)
    statement_timeout: options.statementTimeoutMs || undefined,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs || undefined,
    lock_timeout: options.lockTimeoutMs || undefined,
  });
  // An idle client losing its connection (PostgreSQL restart) must not crash the
  // process; the pool discards it and the next checkout connects afresh.
  pool.on('error', () => undefined);
  if (options.queries) observeQueries(pool, options.queries);
  return pool;
}

type QueryFn = (...args: unknown[]) => unknown;

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

/** Runs fn in one transaction; rolls back on any throw and rethrows. */
export async function withTx<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  // A connection lost between two statements (a PostgreSQL restart) fails the next
  // statement instead of crashing the process, and the transaction rolls back.
  const { client, broken, done } = await checkout(pool);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    done();
    // A broken connection is discarded, not handed to the next caller.
    client.release(broken());
  }
}

/** Checks that the database answers; used by /readyz. */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
