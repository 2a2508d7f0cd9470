// The policy service (docs/design/admission.md): read, set (a full replace) and clear a
// queue's policy, for the operator API, the CLI (through the API), the board and the
// admission verbs; bodies are parsed and statuses computed by the pure src/admission/,
// rows read and written by src/store/admission.ts. Callers have resolved the scope (the
// endpoint) and checked the actor may act on it; every write is audited with the
// accountable human and, when an agent wrote it, the endpoint; a write takes effect on
// the next claim on every instance (the claim reads the row under its lock) and reopens
// the queue at once when it now admits held-back work.

import { parsePolicy } from '../admission/policy.js';
import { statusOf, type QueueStatus } from '../admission/status.js';
import type { Queryable } from '../db/pool.js';
import { notFound, invalidArgument } from '../domain/errors.js';
import { QUEUE_NAME } from '../domain/todo.js';
import {
  deletePolicy,
  listAudit,
  listWindows,
  policyStates,
  policyStatesOfHuman,
  upsertPolicy,
} from '../store/admission.js';
import { reopenQueue } from './reopen.js';

export interface AdmissionDeps {
  db: Queryable;
}

export interface Actor {
  humanId: string;
  /** Set when a granted agent acts over MCP. */
  endpointId: string | null;
}

/** How many windows and audit rows a policy's detail shows (a month of days; a page of changes). */
export const DETAIL_WINDOWS = 30;
export const DETAIL_AUDIT = 50;

export function checkQueue(queue: string, field = 'queue'): string {
  if (!QUEUE_NAME.test(queue)) throw invalidArgument(field, 'must match [a-z0-9][a-z0-9_-]{0,62}');
  return queue;
}

export async function setPolicy(
  deps: AdmissionDeps,
  actor: Actor,
  endpointId: string,
  queue: string,
  input: unknown,
  fieldPrefix = '',
): Promise<QueueStatus & { created: boolean }> {
  checkQueue(queue);
  const limits = parsePolicy(input, fieldPrefix);
  const { created } = await upsertPolicy(deps.db, {
    endpointId,
    queue,
    limits,
    actorHumanId: actor.humanId,
    actorEndpointId: actor.endpointId,
  });
  await reopenQueue(deps.db, endpointId, queue);
  const [state] = await policyStates(deps.db, endpointId, [queue]);
  if (!state) throw notFound('admission policy', `${endpointId}/${queue}`);
  return { ...statusOf(state), created };
}

export async function clearPolicy(
  deps: AdmissionDeps,
  actor: Actor,
  endpointId: string,
  queue: string,
): Promise<{ queue: string; deleted: true }> {
  checkQueue(queue);
  const { deleted } = await deletePolicy(deps.db, {
    endpointId,
    queue,
    actorHumanId: actor.humanId,
    actorEndpointId: actor.endpointId,
  });
  if (!deleted) throw notFound('admission policy for queue', queue);
  return { queue, deleted: true };
}

/** The endpoint's budgeted queues (or one), with status and usage. */
export async function statuses(
  deps: AdmissionDeps,
  endpointId: string,
  queues: string[] | null,
): Promise<QueueStatus[]> {
  return (await policyStates(deps.db, endpointId, queues)).map(statusOf);
}

/** One policy with its status, its last windows and the audit tail. */
export async function policyDetail(deps: AdmissionDeps, endpointId: string, queue: string) {
  checkQueue(queue);
  const [state] = await policyStates(deps.db, endpointId, [queue]);
  if (!state) throw notFound('admission policy for queue', queue);
  const [windows, audit] = await Promise.all([
    listWindows(deps.db, state.id, DETAIL_WINDOWS),
    listAudit(deps.db, endpointId, queue, DETAIL_AUDIT),
  ]);
  return { ...statusOf(state), windows, audit };
}

/** Every policy on the endpoints this human owns. */
export async function humanPolicies(deps: AdmissionDeps, humanId: string) {
  const states = await policyStatesOfHuman(deps.db, humanId);
  return states.map((s) => ({ scope: `endpoint:${s.endpoint_slug}`, endpoint_id: s.endpoint_id, ...statusOf(s) }));
}
