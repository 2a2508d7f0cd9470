// The schedule sweep (docs/design/schedules.md, "The tick"): every 2 s one instance runs
// the tick, claimed like every sweep; the tick's row locks make a firing exactly-once
// even if two instances ran it at once.

import { runScheduleTick, type TickDeps } from '../schedules/tick.js';
import type { Sweep } from './runner.js';

/**
 * A schedule fires at most this long after its instant (plus the tick's own time). Much
 * shorter costs a tick claim and an index probe per interval for nothing; much longer and
 * a "09:00" todo arrives noticeably late.
 */
export const SCHEDULE_TICK_MS = 2_000;

export function scheduleSweep(deps: TickDeps, intervalMs = SCHEDULE_TICK_MS): Sweep {
  return { name: 'schedules', intervalMs, run: async () => ({ ...(await runScheduleTick(deps)) }) };
}
