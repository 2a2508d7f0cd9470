// Coalesced claims and settles (docs/design/coalescing.md): the instance's group-commit
// lanes over the claim and settle statements. A use case calls `statements(deps)` and gets
// the store's functions, coalesced when the deps carry lanes and run on their pool; a call
// on a transaction's client (deps.db is not the lanes' pool) runs alone, as before, so a
// caller that writes more in the same transaction is never mixed with others.

import type { Queryable } from '../db/pool.js';
import type { Metrics } from '../metrics/index.js';
import * as claims from '../store/claims.js';
import { claimLanes, type ClaimLanes } from './coalesce-claims.js';
import { settleLanes, type SettleLanes } from './coalesce-settles.js';
import { checkedInsert, createLanes, type CreateLanes } from './coalesce-creates.js';

/** The instance's lanes, bound to its pool. */
export interface Coalescing extends ClaimLanes, SettleLanes, CreateLanes {
  readonly pool: Queryable;
}

export interface CoalescingOptions {
  /** The most calls one statement serves (SWITCHBOARD_COALESCE_MAX_BATCH); 1 turns coalescing off. */
  maxBatch: number;
  metrics?: Metrics;
}

/** The lanes of one instance; null when coalescing is off (a batch of one). */
export function coalescing(pool: Queryable, options: CoalescingOptions): Coalescing | null {
  if (options.maxBatch <= 1) return null;
  const observe = (statement: string) => (size: number) => options.metrics?.coalescedCalls.observe({ statement }, size);
  return {
    pool,
    ...claimLanes(pool, options.maxBatch, observe),
    ...settleLanes(pool, options.maxBatch, observe),
    ...createLanes(pool, options.maxBatch, observe),
  };
}

/** The claim and settle statements a use case runs on `db`: coalesced when `lanes` run on that pool. */
export function statements(
  db: Queryable,
  lanes: Coalescing | null | undefined,
): ClaimLanes & SettleLanes & CreateLanes {
  if (lanes && lanes.pool === db) return lanes;
  return {
    claimNext: (a) => claims.claimNext(db, a),
    complete: (a) => claims.complete(db, a),
    fail: (a) => claims.fail(db, a),
    heartbeat: (a) => claims.heartbeat(db, a),
    release: (a) => claims.release(db, a),
    insertTodo: (args, windowSeconds, liveLimit) => checkedInsert(db, { args, windowSeconds, liveLimit }),
  };
}
