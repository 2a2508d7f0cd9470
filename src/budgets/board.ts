// What the board reads of admission (docs/design/admission.md, "The board"): every budget
// of a human's endpoints keyed by endpoint and queue (one read, for the queue headers and
// the live stream's change check), and one queue's budget editor: its policy and status
// when it has one, and the audit list, which outlives the policy.

import type { QueueStatus } from '../admission/status.js';
import { listAudit, type AuditRow } from '../store/admission.js';
import { DETAIL_AUDIT, checkQueue, humanPolicies, statuses, type AdmissionDeps } from './service.js';

export type { AuditRow };

export const budgetKey = (endpointId: string, queue: string) => `${endpointId}/${queue}`;

/** Every budget on this human's endpoints, by `endpointId/queue`. */
export async function budgetsOfHuman(deps: AdmissionDeps, humanId: string): Promise<Map<string, QueueStatus>> {
  const policies = await humanPolicies(deps, humanId);
  return new Map(
    policies.map(({ endpoint_id, scope: _s, ...status }) => [budgetKey(endpoint_id, status.queue), status]),
  );
}

/** One queue's budget (null when it has none) and its audit list, newest first. */
export async function budgetEditorView(
  deps: AdmissionDeps,
  endpointId: string,
  queue: string,
): Promise<{ status: QueueStatus | null; audit: AuditRow[] }> {
  checkQueue(queue);
  const [[status], audit] = await Promise.all([
    statuses(deps, endpointId, [queue]),
    listAudit(deps.db, endpointId, queue, DETAIL_AUDIT),
  ]);
  return { status: status ?? null, audit };
}
