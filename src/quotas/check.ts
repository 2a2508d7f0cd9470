// The quota checks the create use cases call (docs/design/limits.md, "Quotas"). A create
// of something a human owns runs inside `withQuota`: one transaction that locks the human's
// row, counts, refuses past the quota and inserts — exact under concurrent creates of one
// human, and free for everyone else. Live todos are checked by `requireTodoRoom` against
// the maintained counters, without a lock (the create path must not serialise): concurrent
// creates may overshoot by their number. Refusals name the quota, its value and the
// setting: failed_precondition (409) for the things a human owns, since retrying never
// helps until one is deleted; resource_exhausted (429) with Retry-After for live todos,
// which agents finish (docs/design/limits.md, "Quotas").

import { inTransaction } from '../db/tx.js';
import type { Queryable } from '../db/pool.js';
import { AppError, notFound } from '../domain/errors.js';
import { DEFAULT_QUOTAS, QUOTA_WORDS, type QuotaKind, type Quotas } from '../domain/quotas.js';
import { countOwned, liveTodoCount, lockHuman, lockOwnerOf, type OwnedKind } from '../store/quotas.js';

/** What a use case needs to check quotas: the configured ones (absent: the defaults). */
export interface QuotaDeps {
  quotas?: Quotas;
}

/**
 * What a client refused at the live-todo quota is told to wait: a minute, long enough for
 * agents to finish some work, short enough that a producer catches up soon after they do.
 */
export const LIVE_TODO_RETRY_SECONDS = 60;

export function quotaExceeded(kind: QuotaKind, limit: number): AppError {
  const { what, per, setting } = QUOTA_WORDS[kind];
  const message = `quota: at most ${limit} ${what} per ${per} (${setting})`;
  if (kind === 'liveTodosPerEndpoint') {
    return new AppError('resource_exhausted', message, {
      quota: setting,
      limit,
      retry_after_seconds: LIVE_TODO_RETRY_SECONDS,
    });
  }
  return new AppError('failed_precondition', `${message}; delete one first`, { quota: setting, limit });
}

/** The human's row locked, whom the thing is for: a human, or the owner of an endpoint. */
export type Owner = { humanId: string } | { endpointId: string };

async function lockOwner(tx: Queryable, owner: Owner): Promise<string> {
  if ('humanId' in owner) {
    if (!(await lockHuman(tx, owner.humanId))) throw notFound('human', owner.humanId);
    return owner.humanId;
  }
  const humanId = await lockOwnerOf(tx, owner.endpointId);
  if (humanId === null) throw notFound('endpoint', owner.endpointId);
  return humanId;
}

/**
 * Runs `create` in a transaction after checking there is room for one more `kind` of the
 * owner's; `create` must write through the transaction it is given.
 */
export async function withQuota<T>(
  db: Queryable,
  deps: QuotaDeps,
  kind: OwnedKind,
  owner: Owner,
  create: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const limit = (deps.quotas ?? DEFAULT_QUOTAS)[kind];
  return inTransaction(db, async (tx) => {
    const humanId = await lockOwner(tx, owner);
    if ((await countOwned(tx, kind, humanId, limit)) >= limit) throw quotaExceeded(kind, limit);
    return create(tx);
  });
}

/** The live-todo quota `deps` configure. */
export const liveTodoLimit = (deps: QuotaDeps) => (deps.quotas ?? DEFAULT_QUOTAS).liveTodosPerEndpoint;

/** Refuses a create of `adding` todos that would take the endpoint past `limit` live todos. */
export async function requireRoomUnder(db: Queryable, endpointId: string, adding: number, limit: number) {
  if ((await liveTodoCount(db, endpointId)) + adding > limit) throw quotaExceeded('liveTodosPerEndpoint', limit);
}

/** Refuses a create of `adding` todos that would take the endpoint past its live-todo quota. */
export async function requireTodoRoom(db: Queryable, deps: QuotaDeps, endpointId: string, adding: number) {
  await requireRoomUnder(db, endpointId, adding, liveTodoLimit(deps));
}
