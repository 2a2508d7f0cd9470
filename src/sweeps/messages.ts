// Message redelivery: a reservation with no ack within the ack timeout goes back to
// pending at its own position and its session hears `message_ready`, so the instance
// holding the stream delivers it again; sessions with an open stream and pending
// messages but nothing in flight (a lost notice) are nudged the same way.

import type { MessageDeps } from '../messages/context.js';
import { returnToPending } from '../messages/delivery.js';
import { expiredReservations, sessionsWaiting } from '../store/message-delivery.js';
import { notifyQueue } from '../store/messages.js';
import type { Sweep } from './runner.js';

/** Per tick: enough for any real backlog, small enough that one tick stays short. */
const BATCH = 500;

export async function redeliverMessages(deps: MessageDeps, ackTimeoutMs: number): Promise<{ returned: number }> {
  let returned = 0;
  for (const r of await expiredReservations(deps.db, ackTimeoutMs, BATCH)) {
    if (await returnToPending(deps, r, true)) returned += 1;
  }
  // Not counted in the result: a deaf stream would make every tick log a nudge.
  for (const ref of await sessionsWaiting(deps.db, BATCH)) await notifyQueue(deps.db, ref);
  return { returned };
}

/** Every 10 s: a lost notice or a missed ack waits at most this long past its timeout. */
export function messageRedeliverySweep(deps: MessageDeps, ackTimeoutMs: number, intervalMs = 10_000): Sweep {
  return {
    name: 'message_redelivery',
    intervalMs,
    run: () => redeliverMessages(deps, ackTimeoutMs),
  };
}
