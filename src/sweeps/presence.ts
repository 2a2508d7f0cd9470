// The presence sweep: shift boundaries and ended overrides change an endpoint's presence
// with nobody calling; this records those changes (a change to `in` owes a digest) and
// sends digests whose presence_in notice was lost. Claimed ticks, like every sweep.

import type { PresenceService } from '../presence/digest.js';
import type { Sweep } from './runner.js';

// Ten seconds: a shift boundary silences or wakes the doorbell within that, and each tick
// is one indexed query over endpoints with a shift, an override or presence out.
const INTERVAL_MS = 10_000;

export function presenceSweep(presence: PresenceService, intervalMs = INTERVAL_MS): Sweep {
  return { name: 'presence', intervalMs, run: () => presence.evaluate() };
}
