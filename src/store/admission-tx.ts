// The admission path's transactions: its own on a pool, or a savepoint when the caller
// already holds a transaction client (TodoDeps.db may be either).

import pg from 'pg';
import type { Queryable } from '../db/pool.js';

/**
 * Runs fn in a transaction: its own on a pool, or a savepoint inside the caller's
 * transaction when `db` is a client already in one.
 */
export async function inTransaction<T>(db: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  if (db instanceof pg.Pool) {
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
  await db.query('SAVEPOINT admission');
  try {
    const result = await fn(db);
    await db.query('RELEASE SAVEPOINT admission');
    return result;
  } catch (err) {
    await db.query('ROLLBACK TO SAVEPOINT admission');
    throw err;
  }
}
