// Running a unit of work in one transaction when the caller holds a pool, or inside the
// caller's own transaction when it already holds a client (a use case composed into a
// larger transaction). Pools are told apart by `connect`, which a checked-out client's
// query interface (Queryable) does not promise.

import { withTx, type Pool, type Queryable } from './pool.js';

export async function inTransaction<T>(db: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  if (isPool(db)) return withTx(db, fn);
  return fn(db);
}

function isPool(db: Queryable): db is Pool {
  return typeof (db as Partial<Pool>).connect === 'function' && 'totalCount' in db;
}
