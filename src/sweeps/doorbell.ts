// The heartbeat re-ring: still-pending work is rung again at 5 min, 20 min, 1 h and 6 h
// of age (within its ring budget). Claimed ticks, like every sweep, so one instance rings.

import type { Doorbell } from '../doorbell/pump.js';
import type { Sweep } from './runner.js';

// A minute: the re-ring thresholds are minutes apart at the least, so a finer tick only
// costs queries.
const INTERVAL_MS = 60_000;

export function reringSweep(doorbell: Doorbell, intervalMs = INTERVAL_MS): Sweep {
  return { name: 'doorbell_rering', intervalMs, run: () => doorbell.rering() };
}
