// The settle lanes (docs/design/coalescing.md, "Settles"): complete, fail, heartbeat and
// release calls of one endpoint coalesce, each verb into one statement.
// TODO(issue 37): the batched statements; until they land each call runs alone.

import type { Queryable } from '../db/pool.js';
import * as claims from '../store/claims.js';

type Args<F> = F extends (db: Queryable, a: infer A) => unknown ? A : never;

export interface SettleLanes {
  complete: (a: Args<typeof claims.complete>) => Promise<claims.SettledTodo | null>;
  fail: (a: Args<typeof claims.fail>) => Promise<claims.SettledTodo | null>;
  heartbeat: (a: Args<typeof claims.heartbeat>) => Promise<claims.BeatTodo | null>;
  release: (a: Args<typeof claims.release>) => Promise<claims.SettledTodo | null>;
}

export function settleLanes(
  pool: Queryable,
  _maxBatch: number,
  _observe: (statement: string) => (size: number) => void,
): SettleLanes {
  return {
    complete: (a) => claims.complete(pool, a),
    fail: (a) => claims.fail(pool, a),
    heartbeat: (a) => claims.heartbeat(pool, a),
    release: (a) => claims.release(pool, a),
  };
}
