// Running a unit of work in one transaction: its own when the caller holds a pool, or a
// savepoint inside the caller's transaction when it already holds a client (a use case
// composed into a larger transaction), so a failure undoes only this unit. Pools are
// told apart by `connect`, which a checked-out client's query interface (Queryable)
// does not promise.

import { withTx, type Pool, type Queryable } from './pool.js';

export async function inTransaction<T>(db: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  if (isPool(db)) return withTx(db, fn);
  await db.query('SAVEPOINT unit');
  try {
    const result = await fn(db);
    await db.query('RELEASE SAVEPOINT unit');
    return result;
  } catch (err) {
    await db.query('ROLLBACK TO SAVEPOINT unit');
    throw err;
  }
}

function isPool(db: Queryable): db is Pool {
  return typeof (db as Partial<Pool>).connect === 'function' && 'totalCount' in db;
}
