// Samples each queue's depth, work in flight and oldest ready todo into its row of the
// current minute (store/queue-rollups.ts, docs/design/queue-rollups.md). The throughput
// of the minute is added by the counter fold (sweeps/counts.ts); pruning is a retention
// sweep (sweeps/retention.ts).

import type { Queryable } from '../db/pool.js';
import { sampleQueueRollups } from '../store/queue-rollups.js';
import type { Sweep } from './runner.js';

/** The sweep's name: its tick row in sweep_ticks, which the board's live fingerprint reads. */
export const ROLLUP_SWEEP = 'queue_rollup';

// One minute: the charts' resolution. Its claimed tick slots are minutes, so one instance
// samples each minute; a shorter interval would only rewrite the same minute's row.
const INTERVAL_MS = 60_000;

/** Logs nothing: a count every minute of every busy server would only be noise. */
export function queueRollupSweep(db: Queryable, intervalMs = INTERVAL_MS): Sweep {
  return {
    name: ROLLUP_SWEEP,
    intervalMs,
    run: async () => {
      await sampleQueueRollups(db);
    },
  };
}
