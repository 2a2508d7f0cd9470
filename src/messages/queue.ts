// The session message queue's operations for people, automation and agents
// (docs/design/message-queue.md): add, edit (same provenance and same sender only),
// remove any visible pending row, Clear all, reorder (an exact permutation of the visible
// rows) and status. Each mutation authorises the named session first, then runs under the
// session's lock row; a successful one announces `message_ready` on commit (status for
// subscribers, work for the delivery), a failed or empty one announces nothing.

import { randomUUID } from 'node:crypto';
import { withTx, type TxClient } from '../db/pool.js';
import { AppError } from '../domain/errors.js';
import { addInput, editInput, isEntryId, removeInput, reorderInput } from '../domain/messages.js';
import type { QueuedBy } from '../domain/messages.js';
import { parseInput } from '../domain/todo.js';
import {
  countMessages,
  deleteAllPending,
  deletePending,
  editContent,
  insertMessage,
  listPending,
  lockSession,
  notifyQueue,
  setPositions,
  type QueuedMessage,
  type SessionRef,
} from '../store/messages.js';
import {
  authorise,
  countersOf,
  entryNotFound,
  provenanceOf,
  sessionNotFound,
  type Actor,
  type MessageDeps,
} from './context.js';

/** A message as people and clients see it; `position` counts from 1 over the visible rows. */
export interface EntryView {
  id: string;
  position: number;
  content: string;
  queued_by: QueuedBy;
  sender_id: string | null;
  queued_at: Date;
}

export interface QueueStatus {
  session_id: string;
  entries: EntryView[];
  /** Visible (pending) messages; in-flight ones are not shown or counted. */
  count: number;
  /** The effective capacity: 0 means unlimited. */
  max: number;
}

function view(m: QueuedMessage, position: number): EntryView {
  return {
    id: m.id,
    position,
    content: m.content,
    queued_by: m.queued_by,
    sender_id: m.sender_id,
    queued_at: m.queued_at,
  };
}

/** Runs `fn` under the session's lock row; a session closed meanwhile is not found. */
async function locked<T>(
  deps: MessageDeps,
  ref: SessionRef,
  fn: (tx: TxClient, generation: number) => Promise<T>,
): Promise<T> {
  return withTx(deps.db, async (tx) => {
    const lock = await lockSession(tx, ref);
    if (!lock) throw sessionNotFound();
    return fn(tx, lock.generation);
  });
}

/** Admission: one capacity snapshot, read under the session's lock, against the rows persisted now (reserved included). */
async function admit(
  deps: MessageDeps,
  ref: SessionRef,
  message: { content: string; queuedBy: QueuedBy; senderId: string | null; metadata?: Record<string, unknown> },
): Promise<QueuedMessage> {
  const counters = countersOf(deps);
  try {
    const row = await locked(deps, ref, async (tx, generation) => {
      const { effective: max } = await deps.capacity.forAdmission(tx);
      const { total, reserved } = await countMessages(tx, ref);
      if (max > 0 && total >= max) {
        throw new AppError('queue_full', `this session's message queue is full (${total} of ${max})`, {
          queue_size: total,
          reserved,
          max,
        });
      }
      const inserted = await insertMessage(tx, ref, { id: randomUUID(), generation, ...message });
      await notifyQueue(tx, ref);
      return inserted;
    });
    counters?.added.inc({ queued_by: message.queuedBy });
    return row;
  } catch (err) {
    if (err instanceof AppError && err.code === 'queue_full') counters?.rejected.inc({ reason: 'queue_full' });
    throw err;
  }
}

export async function addMessage(deps: MessageDeps, actor: Actor, sessionId: string, input: unknown) {
  const ref = await authorise(deps, actor, sessionId);
  const data = parseInput(addInput, input);
  const row = await admit(deps, ref, { content: data.content, ...provenanceOf(actor) });
  return { entry: view(row, await visiblePosition(deps, ref, row.id)) };
}

/** Switchboard's own notice into a session (queued_by server); never reachable from a client. */
export async function addServerMessage(deps: MessageDeps, ref: SessionRef, content: string) {
  const data = parseInput(addInput, { content });
  return admit(deps, ref, { content: data.content, queuedBy: 'server', senderId: null });
}

export async function editMessage(deps: MessageDeps, actor: Actor, sessionId: string, input: unknown) {
  const ref = await authorise(deps, actor, sessionId);
  const data = parseInput(editInput, input);
  if (!isEntryId(data.entry_id)) throw entryNotFound(data.entry_id);
  const { queuedBy, senderId } = provenanceOf(actor);
  const row = await locked(deps, ref, async (tx) => {
    const edited = await editContent(tx, ref, { id: data.entry_id, content: data.content, queuedBy, senderId });
    if (!edited) throw entryNotFound(data.entry_id);
    await notifyQueue(tx, ref);
    return edited;
  });
  return { entry: view(row, await visiblePosition(deps, ref, row.id)) };
}

export async function removeMessage(deps: MessageDeps, actor: Actor, sessionId: string, input: unknown) {
  const ref = await authorise(deps, actor, sessionId);
  const data = parseInput(removeInput, input);
  if (!isEntryId(data.entry_id)) throw entryNotFound(data.entry_id);
  await locked(deps, ref, async (tx) => {
    if (!(await deletePending(tx, ref, data.entry_id))) throw entryNotFound(data.entry_id);
    await notifyQueue(tx, ref);
  });
  countersOf(deps)?.removed.inc({ action: 'remove' });
  return { entry_id: data.entry_id };
}

/** Clear all: every visible pending row, whatever its provenance; in-flight rows stay. */
export async function clearMessages(deps: MessageDeps, actor: Actor, sessionId: string) {
  const ref = await authorise(deps, actor, sessionId);
  const removed = await locked(deps, ref, async (tx) => {
    const ids = await deleteAllPending(tx, ref);
    if (ids.length > 0) await notifyQueue(tx, ref);
    return ids;
  });
  if (removed.length > 0) countersOf(deps)?.removed.inc({ action: 'clear' }, removed.length);
  return { removed: removed.length, entry_ids: removed };
}

/** Reorders the visible rows; anything but an exact permutation of them is queue_changed. */
export async function reorderMessages(deps: MessageDeps, actor: Actor, sessionId: string, input: unknown) {
  const ref = await authorise(deps, actor, sessionId);
  const data = parseInput(reorderInput, input);
  await locked(deps, ref, async (tx) => {
    const current = await listPending(tx, ref);
    const wanted = new Set(data.entry_ids);
    const exact =
      wanted.size === data.entry_ids.length &&
      current.length === data.entry_ids.length &&
      current.every((m) => wanted.has(m.id));
    if (!exact) {
      throw new AppError('queue_changed', 'entry_ids: not exactly the visible messages of this session; refetch', {
        field: 'entry_ids',
      });
    }
    const positions = current.map((m) => m.position).sort((a, b) => a - b);
    await setPositions(tx, ref, data.entry_ids, positions);
    await notifyQueue(tx, ref);
  });
  return statusOf(deps, ref);
}

export async function queueStatus(deps: MessageDeps, actor: Actor, sessionId: string): Promise<QueueStatus> {
  return statusOf(deps, await authorise(deps, actor, sessionId));
}

/** The visible queue of an already authorised session. */
export async function statusOf(deps: MessageDeps, ref: SessionRef): Promise<QueueStatus> {
  const { effective } = await deps.capacity.snapshot();
  const rows = await listPending(deps.db, ref);
  return { session_id: ref.sessionId, entries: rows.map((m, i) => view(m, i + 1)), count: rows.length, max: effective };
}

async function visiblePosition(deps: MessageDeps, ref: SessionRef, id: string): Promise<number> {
  const rows = await listPending(deps.db, ref);
  return rows.findIndex((m) => m.id === id) + 1;
}
