// The todo sweeps: the reaper (lapsed leases), the due-retry requeue, and retention.
// Each works in bounded batches and stops after a bounded number of them per tick (the
// reaper and requeue) or a bounded time (retention), so a backlog drains over a few ticks
// instead of one long transaction.

import type { Pool, Queryable } from '../db/pool.js';
import type { Metrics } from '../metrics/index.js';
import { pruneTerminal, reapExpired, requeueDueRetries } from '../store/todo-sweeps.js';
import type { PruneArgs } from '../store/retention.js';
import { drainPrune, RETENTION_BOUNDS } from './retention.js';
import type { Sweep } from './runner.js';

// 500 rows keep each statement's locks and WAL small; 20 batches (10,000 rows) a tick
// clear any realistic backlog while letting the tick end and other sweeps run.
const BATCH = 500;
const MAX_BATCHES = 20;

async function drain(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await step();
    total += n;
    if (n < BATCH) break;
  }
  return total;
}

export function reaperSweep(db: Pool, intervalMs: number, metrics?: Metrics): Sweep {
  return {
    name: 'reaper',
    intervalMs,
    async run() {
      let deadLettered = 0;
      const requeued = await drain(async () => {
        const r = await reapExpired(db, BATCH);
        deadLettered += r.deadLettered;
        metrics?.leaseExpirations.inc(r.requeued + r.deadLettered);
        metrics?.todosDeadLettered.inc(r.deadLettered);
        return r.requeued + r.deadLettered;
      });
      return { requeued: requeued - deadLettered, dead_lettered: deadLettered };
    },
  };
}

export function retryRequeueSweep(db: Pool, intervalMs: number): Sweep {
  return {
    name: 'retry_requeue',
    intervalMs,
    async run() {
      return { requeued: await drain(() => requeueDueRetries(db, BATCH)) };
    },
  };
}

/** Finished todos past retention, drained like the other retention rules (sweeps/retention.ts). */
export function retentionSweep(db: Pool, intervalMs: number, retentionMs: number): Sweep {
  const prune = (q: Queryable, a: PruneArgs) => pruneTerminal(q, a.olderThanSeconds, a.limit);
  return {
    name: 'retention',
    intervalMs,
    async run() {
      return { pruned: await drainPrune(db, prune, retentionMs, RETENTION_BOUNDS) };
    },
  };
}
