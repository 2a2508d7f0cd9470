// The claim_next lane (docs/design/coalescing.md, "Claims"): calls of one endpoint and
// queue set coalesce into one claim statement.
// TODO(issue 37): the batched statement; until it lands each call runs alone.

import type { Queryable } from '../db/pool.js';
import * as claims from '../store/claims.js';

export interface ClaimLanes {
  claimNext: (args: claims.ClaimArgs) => Promise<claims.ClaimRow[]>;
}

export function claimLanes(
  pool: Queryable,
  _maxBatch: number,
  _observe: (statement: string) => (size: number) => void,
): ClaimLanes {
  return { claimNext: (a) => claims.claimNext(pool, a) };
}
