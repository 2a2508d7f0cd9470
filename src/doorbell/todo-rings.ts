// A todo's doorbell rings as people see them (docs/design/doorbell-acknowledgement.md,
// "The model"): each ring's state — open (sent, no answer yet), heard (a claim or
// ack_doorbell answered it in its window), heard late (answered after the window closed)
// or unheard — and how it was acknowledged.

import type { Queryable } from '../db/pool.js';
import { listTodoRings, type TodoRing } from '../store/todo-rings.js';

/** A todo rings at most MAX_RINGS times; a few more covers rings on attach. */
const SHOWN = 20;

export type RingState = 'open' | 'heard' | 'heard_late' | 'unheard';

export interface RingView extends TodoRing {
  state: RingState;
}

export function ringState(r: TodoRing): RingState {
  if (r.acked_at) return r.unheard_at ? 'heard_late' : 'heard';
  return r.unheard_at ? 'unheard' : 'open';
}

/** The rings of one todo of this endpoint (the caller has checked the todo is the human's). */
export async function todoRings(db: Queryable, endpointId: string, todoId: string): Promise<RingView[]> {
  return (await listTodoRings(db, endpointId, todoId, SHOWN)).map((r) => ({ ...r, state: ringState(r) }));
}
