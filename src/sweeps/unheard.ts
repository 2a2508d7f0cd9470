// The doorbell's background work (docs/design/doorbell-acknowledgement.md), in claimed
// ticks like every sweep:
// - unheard: rings delivered but not acknowledged within SWITCHBOARD_DOORBELL_ACK_WINDOW
//   become unheard (counted once), and a session whose last 3 rings all went unheard is
//   marked unheard, with one warning per session per run of this process;
// - doorbell_tests: rings self-tests whose timer was lost, freezes expired tests and
//   deletes their synthetic todos. Ring records and reports are kept for
//   SWITCHBOARD_DOORBELL_RETENTION and pruned by the doorbell_retention sweep
//   (src/sweeps/retention.ts).

import type { Logger } from 'pino';
import type { Queryable } from '../db/pool.js';
import { freezeTest } from '../doorbell/self-test-report.js';
import type { SelfTestRinger } from '../doorbell/self-test-ring.js';
import type { DoorbellCounters } from '../metrics/doorbell.js';
import { markUnheardRings, markUnheardSessions } from '../store/doorbell-rings.js';
import { cleanupSynthetic, expiredTests, getTest } from '../store/doorbell-tests.js';
import type { Sweep } from './runner.js';

// Half a minute: the shortest window is a minute, so a ring is marked at most 30 s late.
const UNHEARD_INTERVAL_MS = 30_000;
// Ten seconds: a test's verdict is read (and frozen) by get_doorbell_test itself; the sweep
// only catches up on tests nobody asked about, lost rings, and cleanup.
const TESTS_INTERVAL_MS = 10_000;
// 500 rows a statement, 20 statements a tick: the same bounds as the todo sweeps.
const BATCH = 500;
const MAX_BATCHES = 20;

export interface UnheardSweepDeps {
  db: Queryable;
  log: Logger;
  ackWindowMs: number;
  metrics?: DoorbellCounters;
  intervalMs?: number;
}

export function unheardSweep(deps: UnheardSweepDeps): Sweep {
  const warned = new Set<string>();
  return {
    name: 'doorbell_unheard',
    intervalMs: deps.intervalMs ?? UNHEARD_INTERVAL_MS,
    async run() {
      let rings = 0;
      let sessions = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const marked = await markUnheardRings(deps.db, { windowSeconds: deps.ackWindowMs / 1000, limit: BATCH });
        deps.metrics?.markedUnheard(marked);
        rings += marked.length;
        const touched = new Map(marked.map((r) => [`${r.endpoint_id}/${r.session_id}`, r]));
        for (const s of await markUnheardSessions(deps.db, [...touched.values()])) {
          sessions += 1;
          if (warned.has(s.id)) continue;
          warned.add(s.id);
          deps.log.warn(
            { session: s.id, endpoint: s.endpoint_id, client: s.client_name },
            'doorbells to this session are delivered but not heard: its last 3 rings went unacknowledged ' +
              '(run `switchboard doctor ENDPOINT` for the client settings that fix it)',
          );
        }
        if (marked.length < BATCH) break;
      }
      return { unheard_rings: rings, unheard_sessions: sessions };
    },
  };
}

export function doorbellTestsSweep(deps: { db: Queryable; ringer: SelfTestRinger; intervalMs?: number }): Sweep {
  return {
    name: 'doorbell_tests',
    intervalMs: deps.intervalMs ?? TESTS_INTERVAL_MS,
    async run() {
      const { rung } = await deps.ringer.ringOverdue();
      let expired = 0;
      for (const t of await expiredTests(deps.db, BATCH)) {
        const test = await getTest(deps.db, t.endpoint_id, t.id);
        if (test && (await freezeTest(deps.db, test, 'expiry'))) expired += 1;
      }
      const syntheticDeleted = await cleanupSynthetic(deps.db, BATCH);
      return { rung, expired, synthetic_deleted: syntheticDeleted };
    },
  };
}
