// The ask timeout sweep (docs/design/ask-human.md, "Timeouts"): questions nobody answered
// by their expiry close as timed out and their todos go back to their queues, first in
// line, announced with todo_ready like an answer. Bounded batches, SKIP LOCKED on the
// todo rows: a todo an answer or a cancel holds is theirs, and once they commit it is no
// longer waiting, so the sweep never acts on it after them.

import type { Pool } from '../db/pool.js';
import type { Metrics } from '../metrics/index.js';
import { timeOutAsks } from '../store/asks.js';
import { RETURN_PRIORITY } from '../todos/ask.js';
import type { Sweep } from './runner.js';

// Timeouts come in trickles (each is one agent's question); 200 a statement and 10
// statements a tick clear even a mass expiry (a weekend's questions) within a few ticks.
const BATCH = 200;
const MAX_BATCHES = 10;

export function askTimeoutSweep(db: Pool, intervalMs: number, metrics?: Metrics): Sweep {
  return {
    name: 'ask_timeout',
    intervalMs,
    async run() {
      let timedOut = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const rows = await timeOutAsks(db, { limit: BATCH, priority: RETURN_PRIORITY });
        timedOut += rows.length;
        metrics?.asks.timedOut.inc(rows.length);
        if (rows.length < BATCH) break;
      }
      return { timed_out: timedOut };
    },
  };
}
