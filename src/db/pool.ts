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

/** Runs fn in one transaction; rolls back on any throw and rethrows. */
export async function withTx<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A checked-out client has no error listener of the pool's: a connection lost between
  // two statements (a PostgreSQL restart) would otherwise crash the process. The next
  // statement fails instead, and the transaction rolls back.
  let broken: Error | undefined;
  const lost = (err: Error) => {
    broken = err;
  };
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.removeListener('error', lost);
    // A broken connection is discarded, not handed to the next caller.
    client.release(broken);
  }
}

/** Checks that the database answers; used by /readyz. */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
