// Delivery of session messages to the agent (docs/design/message-queue.md, "Delivery"):
// reserve the head (one message in flight per session, under the session's lock row),
// hand it out as a `notifications/claude/channel` or through next_message, delete it on
// ack_message, and return it to pending — same id, position, queued_at, queued_by — when
// the write fails, the stream closes or no ack comes within the ack timeout. Returning
// bypasses the capacity (nothing is admitted: the row never left). At-least-once: a
// message can be handed out again, never lost, until its ack or its session's purge.
//
// Only a session whose initialize declared claude/channel is pushed to: a client that did
// not cannot show the notification, and a message reserved for it would sit in flight,
// hidden from its next_message, until the ack timeout. Such a session pulls its messages
// with next_message (docs/design/message-queue.md, "Delivery").

import { z } from 'zod';
import { withTx } from '../db/pool.js';
import { neutralise, type ChannelParams } from '../doorbell/content.js';
import { ackInput, isEntryId } from '../domain/messages.js';
import { AppError } from '../domain/errors.js';
import { MAX_WAIT_SECONDS, parseInput, waitSeconds } from '../domain/todo.js';
import type { Waiting } from '../todos/waiters.js';
import {
  ackReserved,
  releaseReservation,
  releaseSession,
  reserveHead,
  streamHeldBy,
  streamHeldElsewhere,
  type Reservation,
} from '../store/message-delivery.js';
import { lockSession, notifyQueue, type QueuedMessage, type SessionRef } from '../store/messages.js';
import { countersOf, type MessageDeps } from './context.js';

export type { Reservation } from '../store/message-delivery.js';

/**
 * Reserves the session's head. With `streamOn`, only while the session's stream is open
 * on that instance (the auto-run of the instance holding the stream); without, for
 * next_message. Null: nothing pending, one already in flight, or the session is gone.
 */
export async function reserveNext(
  deps: MessageDeps,
  ref: SessionRef,
  streamOn?: string,
): Promise<QueuedMessage | null> {
  // Every instance hears every notice: only the stream's holder goes on to take the lock.
  if (streamOn !== undefined && !(await streamHeldBy(deps.db, ref, streamOn))) return null;
  const row = await withTx(deps.db, async (tx) => {
    if (!(await lockSession(tx, ref, streamOn))) return null;
    const reserved = await reserveHead(tx, ref);
    // Status only: a reservation hides a row but gives no instance anything to deliver.
    if (reserved) await notifyQueue(tx, ref, false);
    return reserved;
  });
  return row;
}

export function reservationOf(m: QueuedMessage): Reservation {
  return {
    endpointId: m.endpoint_id,
    sessionId: m.session_id,
    id: m.id,
    generation: m.generation,
    attempt: m.delivery_attempts,
  };
}

/** Counts a message handed to the agent (after the write or the next_message answer). */
export function countDelivery(deps: MessageDeps, m: QueuedMessage): void {
  const counters = countersOf(deps);
  counters?.delivered.inc();
  if (m.delivery_attempts > 1) counters?.redelivered.inc();
}

/**
 * Returns a reservation to pending. `deliver` tells the stream's instance to try again at
 * once (the ack timeout); a failed write does not, so a deaf stream is retried by the
 * sweep rather than in a loop. Status subscribers hear of it either way. False when the
 * retry is stale (acked, purged, reserved anew).
 */
export async function returnToPending(deps: MessageDeps, r: Reservation, deliver: boolean): Promise<boolean> {
  const ref = { endpointId: r.endpointId, sessionId: r.sessionId };
  return withTx(deps.db, async (tx) => {
    const lock = await lockSession(tx, ref);
    if (!lock || lock.generation !== r.generation) return false;
    const released = await releaseReservation(tx, r);
    if (released) await notifyQueue(tx, ref, deliver);
    return released;
  });
}

/**
 * The session's stream closed or reopened: whatever was in flight on it goes back to
 * pending. With `closedOn`, a stream that closed on that instance — unless the session's
 * stream has meanwhile moved to another instance, whose deliveries are its own.
 */
export async function returnSessionToPending(deps: MessageDeps, ref: SessionRef, closedOn?: string): Promise<number> {
  return withTx(deps.db, async (tx) => {
    if (!(await lockSession(tx, ref))) return 0;
    // Under the session lock, which every reservation takes: a stream that reopened on
    // another instance and reserved there has committed before this reads it, and its
    // deliveries are not released from under it.
    if (closedOn !== undefined && (await streamHeldElsewhere(tx, ref, closedOn))) return 0;
    const n = await releaseSession(tx, ref);
    if (n > 0) await notifyQueue(tx, ref);
    return n;
  });
}

/** next_message's arguments, as tools/list shows them. */
export const nextMessageInput = z.strictObject({
  wait_seconds: waitSeconds
    .optional()
    .describe(
      `When no message is waiting, wait up to this many seconds (0–${MAX_WAIT_SECONDS}; default 0, answer at ` +
        'once) for one to be queued; {"empty": true} if none came by then.',
    ),
});

export type NextMessageResult = { message: ReturnType<typeof messageOut> } | { empty: true };

/**
 * next_message: reserves the head and returns it, for clients without a stream. With
 * wait_seconds (and the instance's waiters), waits for a message queued meanwhile.
 */
export async function nextMessage(
  deps: MessageDeps,
  ref: SessionRef,
  input: unknown = {},
  waiting?: Waiting,
): Promise<NextMessageResult> {
  const data = parseInput(nextMessageInput, input ?? {});
  const answer = (row: QueuedMessage | null): NextMessageResult => {
    if (!row) return { empty: true };
    countDelivery(deps, row);
    return { message: messageOut(row) };
  };
  if (!data.wait_seconds || !waiting) return answer(await reserveNext(deps, ref));
  const signal = waiting.signal?.();
  let reserved: QueuedMessage | null = null;
  const result = await waiting.waiters.wait<NextMessageResult>({
    verb: 'next_message',
    endpointId: ref.endpointId,
    sessionId: ref.sessionId,
    queues: null,
    seconds: data.wait_seconds,
    signal,
    empty: { empty: true },
    attempt: async () => {
      reserved = await reserveNext(deps, ref);
      return { done: reserved !== null, value: reserved ? { message: messageOut(reserved) } : { empty: true } };
    },
  });
  if (!reserved) return result;
  // The caller went away while the reservation ran: the message goes back at once.
  if (signal?.aborted) {
    await returnToPending(deps, reservationOf(reserved), true);
    return { empty: true };
  }
  return answer(reserved);
}

/** ack_message: the agent has the message; it is deleted and the next one may follow. */
export async function ackMessage(deps: MessageDeps, ref: SessionRef, input: unknown) {
  const data = parseInput(ackInput, input);
  const acked =
    isEntryId(data.message_id) &&
    (await withTx(deps.db, async (tx) => {
      const deleted = await ackReserved(tx, ref, data.message_id);
      if (deleted) await notifyQueue(tx, ref);
      return deleted;
    }));
  if (!acked) {
    throw new AppError(
      'not_found',
      `message_id: no message ${data.message_id} in flight to this session (already acknowledged, or returned to the queue)`,
      { field: 'message_id', message_id: data.message_id },
    );
  }
  countersOf(deps)?.acknowledged.inc();
  return { acknowledged: true, message_id: data.message_id };
}

/** The sending endpoint of an agent's message (slug kept at send time, id as sender_id); {} otherwise. */
function sender(m: QueuedMessage): { from_endpoint?: string; from_endpoint_id?: string } {
  if (m.queued_by !== 'agent' || m.sender_id === null) return {};
  const slug = m.metadata.from_endpoint;
  return { ...(typeof slug === 'string' ? { from_endpoint: slug } : {}), from_endpoint_id: m.sender_id };
}

export function messageOut(m: QueuedMessage) {
  return {
    message_id: m.id,
    queued_by: m.queued_by,
    queued_at: m.queued_at,
    content: m.content,
    delivery_attempt: m.delivery_attempts,
    ...sender(m),
  };
}

/**
 * The channel notification for one message: a header line, the content confined to
 * neutralised lines (no `</channel>` in any case, no control characters), and how to
 * acknowledge it. Every meta value is a string under a snake_case key; an agent's message
 * names its sending endpoint (`from_endpoint` slug, `from_endpoint_id`).
 */
export function messageParams(m: QueuedMessage): ChannelParams {
  const lines = m.content.split(/\r\n|\r|\n|\u2028|\u2029/).map(neutralise);
  const from = sender(m);
  const by = from.from_endpoint ? `agent endpoint ${neutralise(from.from_endpoint)}` : m.queued_by;
  const content = [
    `A message for this session (queued by ${by}), id ${m.id}:`,
    ...lines,
    `When you have read it, call ack_message with message_id ${m.id}; until then it may be delivered again.`,
  ].join('\n');
  return { content, meta: { message_id: m.id, queued_by: m.queued_by, kind: 'message', ...from } };
}
