// The claim_next lane (docs/design/coalescing.md, "Claims"): calls of one endpoint and
// queue set coalesce into one claim statement (src/store/claims-batch.ts). An idle lane
// runs claims.claimNext alone, as before; calls queued behind it are dealt the rows of one
// FOR UPDATE SKIP LOCKED pass, in the order they queued.

import type { Queryable } from '../db/pool.js';
import { GroupCommitLanes, retryAlone } from '../db/group-commit.js';
import * as claims from '../store/claims.js';
import { claimNextMany } from '../store/claims-batch.js';

export interface ClaimLanes {
  claimNext: (args: claims.ClaimArgs) => Promise<claims.ClaimRow[]>;
}

/** The lane key: the endpoint and its requested queues as a set (their order changes nothing). */
function laneKey(a: claims.ClaimArgs): string {
  return JSON.stringify([a.endpointId, [...new Set(a.queues)].sort()]);
}

export function claimLanes(
  pool: Queryable,
  maxBatch: number,
  observe: (statement: string) => (size: number) => void,
): ClaimLanes {
  const lanes = new GroupCommitLanes<claims.ClaimArgs, claims.ClaimRow[]>({
    one: (a) => claims.claimNext(pool, a),
    // Every input of a lane has the same endpoint and queue set (laneKey).
    many: (inputs) => {
      const [first] = inputs as [claims.ClaimArgs];
      return claimNextMany(pool, first.endpointId, first.queues, inputs);
    },
    maxBatch,
    alone: retryAlone,
    observe: observe('claim_next'),
  });
  return { claimNext: (a) => lanes.submit(laneKey(a), a) };
}
