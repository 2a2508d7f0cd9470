// Sweep tick claims: time is cut into slots of the sweep's interval (by the database
// clock); the first instance to claim a sweep's row within the current slot runs that
// tick, every other instance sees it claimed since the slot began and skips it. The test
// is on the claim time, not the slot number, so changing an interval between restarts
// (which renumbers the slots) never blocks a sweep.

import type { Queryable } from '../db/pool.js';

/** The slot number when this instance won the current slot of `name`, else null. */
export async function claimTick(
  db: Queryable,
  name: string,
  intervalMs: number,
  instance: string,
): Promise<number | null> {
  const res = await db.query<{ slot: number }>(
    `INSERT INTO sweep_ticks AS s (name, slot, instance, claimed_at)
     VALUES ($1, floor(extract(epoch FROM now()) * 1000 / $2)::bigint, $3, now())
     ON CONFLICT (name) DO UPDATE SET slot = EXCLUDED.slot, instance = EXCLUDED.instance, claimed_at = now()
       WHERE s.claimed_at < to_timestamp(EXCLUDED.slot * $2::double precision / 1000)
     RETURNING slot`,
    [name, intervalMs, instance],
  );
  return res.rows[0]?.slot ?? null;
}
