// Hand-off reply delivery (docs/design/handoff.md, "Reply"): a reply whose bus notice was
// lost (or whose delivery failed) is delivered by this sweep.

import { deliverReplies, type ReplyDeps } from '../grants/reply.js';
import type { Sweep } from './runner.js';

/** Every 10 s: a reply whose notice was lost waits at most this long. */
export function replySweep(deps: ReplyDeps, intervalMs = 10_000): Sweep {
  return { name: 'handoff_replies', intervalMs, run: () => deliverReplies(deps) };
}
