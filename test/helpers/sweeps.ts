// Holding a sweep: for a test file that drives a sweep by hand, the real one on its
// servers must not run in between. claimTick (src/store/sweep-ticks.ts) wins a slot only
// when the tick row was claimed before that slot began; a row claimed at 'infinity' never
// is, so no instance on the database runs the sweep again.

import type { Queryable } from '../../src/db/pool.js';

export async function holdSweep(db: Queryable, name: string): Promise<void> {
  await db.query(
    `INSERT INTO sweep_ticks (name, slot, instance, claimed_at) VALUES ($1, 0, 'held-by-test', 'infinity')
     ON CONFLICT (name) DO UPDATE SET instance = 'held-by-test', claimed_at = 'infinity'`,
    [name],
  );
}
