// The notify hook sweep: todo_ready is a NOTIFY and so a hint; this finds ready
// transitions of endpoints with hooks that nobody decided (the notice was lost) and
// delivers them late rather than never. Claimed ticks, like every sweep.

import type { NotifyHooks } from '../hooks/notify.js';
import type { Sweep } from './runner.js';

// Thirty seconds, the reaper's pace: a lost notice is rare, and a late hint beats a
// missing one without scanning pending todos often.
const INTERVAL_MS = 30_000;

export function hookSweep(hooks: NotifyHooks, intervalMs = INTERVAL_MS): Sweep {
  return { name: 'notify_hooks', intervalMs, run: () => hooks.sweep() };
}
