// Folds the todo counters' deltas into their totals (store/todo-counts.ts). Reads are exact
// without it; folding keeps the delta table, and so every read of the counters, small.

import type { Queryable } from '../db/pool.js';
import { foldTodoCounts } from '../store/todo-counts.js';
import type { Sweep } from './runner.js';

// Two seconds: a read sums the deltas of about one interval (a few thousand rows at the
// fastest claim rates), and the fold itself is one statement over those rows.
const INTERVAL_MS = 2_000;

export function todoCountsFoldSweep(db: Queryable, intervalMs = INTERVAL_MS): Sweep {
  return { name: 'todo_counts_fold', intervalMs, run: async () => ({ folded: await foldTodoCounts(db) }) };
}
