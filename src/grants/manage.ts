// Hand-off grants as their owners manage them (docs/design/handoff.md, "Grants"): create
// (born active within one owner, requested across owners), approve or deny (the target's
// owner), revoke (either side), list both directions and show one with its history. Every
// change writes its audit row, naming both owners, in the transaction that made it.

import { z } from 'zod';
import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { SLUG } from '../domain/endpoint.js';
import { AppError, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { PRIORITY_BOUNDS, QUEUE_NAME, parseInput } from '../domain/todo.js';
import { getEndpointByRef } from '../store/endpoints.js';
import {
  auditGrant,
  decideGrant,
  getVisibleGrant,
  grantAudit,
  insertGrant,
  liveEndpointBySlug,
  listVisibleGrants,
  revokeGrant as revokeRow,
  type GrantAction,
  type GrantRow,
} from '../store/grants.js';

export interface GrantDeps {
  /** A pool: each change is its own transaction with its audit row. */
  db: Queryable;
}

const slug = z.string().regex(SLUG, 'must be an endpoint slug');

export const createGrantInput = z.strictObject({
  from: slug.describe('The sending endpoint: one of yours.'),
  to: slug.describe('The endpoint whose queues the sender may put todos on: yours, or another owner’s.'),
  queues: z
    .array(z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}'))
    .min(1, 'must name at least one queue')
    .max(50, 'must name at most 50 queues')
    .describe("The target's queues the grant covers."),
  max_priority: z
    .number()
    .int()
    .min(PRIORITY_BOUNDS.min)
    .max(PRIORITY_BOUNDS.max)
    .optional()
    .describe('The highest priority a handed-off todo may ask for.'),
  rate_per_hour: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe('At most this many hand-offs per hour under the grant.'),
});

/** The list's bound: a human with more grants than this pages through the board's history instead. */
const LIST_LIMIT = 500;

/** A grant as every surface shows it (the contract's `{id, from, to, queues, state}` and the rest). */
export function grantView(g: GrantRow) {
  return {
    id: g.id,
    from: g.from_slug,
    to: g.to_slug,
    queues: g.queues,
    state: g.state,
    max_priority: g.max_priority,
    rate_per_hour: g.rate_per_hour,
    requested_by: g.requested_by,
    decided_by: g.decided_by,
    revoked_by: g.revoked_by,
    created_at: g.created_at,
    decided_at: g.decided_at,
    revoked_at: g.revoked_at,
  };
}
export type GrantView = ReturnType<typeof grantView>;

/** POST /api/v1/grants. A `from` that is not the caller's answers not_found, like an unknown one. */
export async function createGrant(deps: GrantDeps, humanId: string, input: unknown): Promise<{ grant: GrantView }> {
  const data = parseInput(createGrantInput, input);
  const from = await getEndpointByRef(deps.db, humanId, data.from);
  if (!from || from.revoked_at !== null)
    throw new AppError('not_found', `from: endpoint ${data.from} not found`, { field: 'from' });
  const to = await liveEndpointBySlug(deps.db, data.to);
  if (!to) throw new AppError('not_found', `to: endpoint ${data.to} not found`, { field: 'to' });
  if (to.id === from.id)
    throw new AppError('invalid_argument', 'to: must be another endpoint than from', { field: 'to' });
  const sameOwner = to.human_id === humanId;
  // Within one owner the queues are checked now; across owners they are the target owner's to judge.
  if (sameOwner) {
    const unknown = data.queues.find((q) => !to.queues.includes(q));
    if (unknown !== undefined) {
      throw new AppError(
        'invalid_argument',
        `queues: "${unknown}" is not one of ${to.slug}'s queues (${to.queues.join(', ')})`,
        {
          field: 'queues',
        },
      );
    }
  }
  const queues = [...new Set(data.queues)];
  const grant = await inTransaction(deps.db, async (tx) => {
    const row = await insertGrant(tx, {
      id: newId('gr'),
      fromEndpointId: from.id,
      toEndpointId: to.id,
      queues,
      maxPriority: data.max_priority ?? null,
      ratePerHour: data.rate_per_hour ?? null,
      state: sameOwner ? 'active' : 'requested',
      humanId,
    });
    await auditGrant(tx, {
      grant: row,
      actorHumanId: humanId,
      action: sameOwner ? 'create' : 'request',
      detail: { queues },
    });
    return row;
  });
  return { grant: grantView(grant) };
}

/** GET /api/v1/grants: both directions, newest first. */
export async function listGrants(deps: GrantDeps, humanId: string): Promise<{ grants: GrantView[] }> {
  const rows = await listVisibleGrants(deps.db, humanId, LIST_LIMIT);
  return { grants: rows.map(grantView) };
}

/** GET /api/v1/grants/{id}: the grant and its history, to either side's owner. */
export async function showGrant(deps: GrantDeps, humanId: string, id: string) {
  const row = await getVisibleGrant(deps.db, humanId, id);
  if (!row) throw notFound('grant', id);
  const audit = await grantAudit(deps.db, id);
  return { grant: grantView(row), audit: audit.map(({ grant_id: _, ...a }) => a) };
}

/** POST /api/v1/grants/{id}/approve. */
export function approveGrant(deps: GrantDeps, humanId: string, id: string) {
  return decide(deps, humanId, id, 'approve');
}

/** POST /api/v1/grants/{id}/deny. */
export function denyGrant(deps: GrantDeps, humanId: string, id: string) {
  return decide(deps, humanId, id, 'deny');
}

async function decide(
  deps: GrantDeps,
  humanId: string,
  id: string,
  action: 'approve' | 'deny',
): Promise<{ grant: GrantView }> {
  const row = await inTransaction(deps.db, async (tx) => {
    const decided = await decideGrant(tx, { id, humanId, to: action === 'approve' ? 'active' : 'denied' });
    if (decided) await auditGrant(tx, { grant: decided, actorHumanId: humanId, action });
    return decided;
  });
  if (row) return { grant: grantView(row) };
  throw await refusal(deps, humanId, id, action);
}

/** DELETE /api/v1/grants/{id}: a requested grant is withdrawn, an active one stops new hand-offs at once. */
export async function revokeGrant(deps: GrantDeps, humanId: string, id: string): Promise<{ grant: GrantView }> {
  const row = await inTransaction(deps.db, async (tx) => {
    const revoked = await revokeRow(tx, { id, humanId });
    if (revoked) await auditGrant(tx, { grant: revoked, actorHumanId: humanId, action: 'revoke' });
    return revoked;
  });
  if (row) return { grant: grantView(row) };
  throw await refusal(deps, humanId, id, 'revoke');
}

/** Why a decision matched no row: not visible (not_found), not the target's owner (forbidden), or already decided (conflict). */
async function refusal(deps: GrantDeps, humanId: string, id: string, action: GrantAction): Promise<AppError> {
  const row = await getVisibleGrant(deps.db, humanId, id);
  if (!row) return notFound('grant', id);
  if (action !== 'revoke' && row.to_human_id !== humanId) {
    return new AppError('forbidden', `only the owner of ${row.to_slug} may ${action} this grant`, { id });
  }
  return new AppError('conflict', `cannot ${action}: the grant is ${row.state}`, { id, state: row.state });
}
