// The admission sweeps (docs/design/admission.md): the reopen, every 30 s (a window that
// rolled over or a slot that freed without a settle on this server, e.g. a lease reaped),
// and the retention of window counters older than 35 days. Claimed ticks, like every sweep.

import type { Queryable } from '../db/pool.js';
import { reopenHeld } from '../budgets/reopen.js';
import { pruneWindows } from '../store/admission.js';
import type { Sweep } from './runner.js';

/** The reaper's tick (docs/design/admission.md): a rollover is pushed at most this long after it happens. */
export const REOPEN_INTERVAL_MS = 30_000;
/** A month of history for the board, plus a few days' margin for a month of 31 days. */
export const WINDOW_RETENTION_DAYS = 35;
// Windows deleted per statement and statements per tick: small locks, bounded ticks.
const BATCH = 500;
const MAX_BATCHES = 20;

export function admissionReopenSweep(db: Queryable, intervalMs = REOPEN_INTERVAL_MS): Sweep {
  return { name: 'admission_reopen', intervalMs, run: () => reopenHeld(db) };
}

export function admissionRetentionSweep(db: Queryable, intervalMs: number, days = WINDOW_RETENTION_DAYS): Sweep {
  return {
    name: 'admission_retention',
    intervalMs,
    async run() {
      let pruned = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const n = await pruneWindows(db, days, BATCH);
        pruned += n;
        if (n < BATCH) break;
      }
      return { pruned_windows: pruned };
    },
  };
}
