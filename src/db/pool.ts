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
  });
  // An idle client losing its connection (PostgreSQL restart) must not crash the
  // process; the pool discards it and the next checkout connects afresh.
  pool.on('error', () => undefined);
  return pool;
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
