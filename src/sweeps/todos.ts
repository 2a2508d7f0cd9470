// The todo sweeps: the reaper (lapsed leases), the due-retry requeue, and retention.
// Each works in bounded batches and stops after a bounded number of them per tick, so a
// backlog drains over a few ticks instead of one long transaction.

import type { Pool } from '../db/pool.js';
import type { Metrics } from '../metrics/index.js';
import { pruneTerminal, reapExpired, requeueDueRetries } from '../store/todo-sweeps.js';
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

export function retentionSweep(db: Pool, intervalMs: number, retentionMs: number): Sweep {
  return {
    name: 'retention',
    intervalMs,
    async run() {
      return { pruned: await drain(() => pruneTerminal(db, retentionMs / 1000, BATCH)) };
    },
  };
}
