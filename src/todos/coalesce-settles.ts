// The settle lanes (docs/design/coalescing.md, "Settles"): concurrent complete, fail,
// heartbeat and release calls share one statement and one commit, one lane per verb.
// Each row of a batch names its own endpoint (src/store/settles-batch.ts), so one lane
// serves every endpoint: keying by endpoint would only split the batches, and a settle
// names one todo by primary key, so there is no queue or plan to keep apart.

import { GroupCommit, retryAlone } from '../db/group-commit.js';
import type { Queryable } from '../db/pool.js';
import * as claims from '../store/claims.js';
import * as batch from '../store/settles-batch.js';

type Args<F> = F extends (db: Queryable, a: infer A) => unknown ? A : never;

export interface SettleLanes {
  complete: (a: Args<typeof claims.complete>) => Promise<claims.SettledTodo | null>;
  fail: (a: Args<typeof claims.fail>) => Promise<claims.SettledTodo | null>;
  heartbeat: (a: Args<typeof claims.heartbeat>) => Promise<claims.BeatTodo | null>;
  release: (a: Args<typeof claims.release>) => Promise<claims.SettledTodo | null>;
}

export function settleLanes(
  pool: Queryable,
  maxBatch: number,
  observe: (statement: string) => (size: number) => void,
): SettleLanes {
  // One lane of `statement`: alone it runs the single statement, queued calls run `many`.
  const lane = <I, O>(
    statement: string,
    one: (db: Queryable, a: I) => Promise<O>,
    many: (db: Queryable, a: I[]) => Promise<O[]>,
  ) => {
    const g = new GroupCommit<I, O>({
      one: (a) => one(pool, a),
      many: (as) => many(pool, as),
      maxBatch,
      alone: retryAlone,
      observe: observe(statement),
    });
    return (a: I) => g.submit(a);
  };
  return {
    complete: lane('complete', claims.complete, batch.completeMany),
    fail: lane('fail', claims.fail, batch.failMany),
    heartbeat: lane('heartbeat', claims.heartbeat, batch.heartbeatMany),
    release: lane('release', claims.release, batch.releaseMany),
  };
}
