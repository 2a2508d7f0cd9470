// Bulk cancel / retry of an endpoint's todos by filter (docs/design/todos.md, "Bulk
// actions"): the input schema the API, CLI and board share, which states each action
// applies to, the batched run with its keyset cursor, and the audit row. The caller has
// checked that the human may act on the endpoint. Each batch commits on its own, so a
// match of 100k rows never holds one transaction or one lock set; a dry run only counts.

import { z } from 'zod';
import { invalidArgument, isAppError } from '../domain/errors.js';
import { dateTime } from '../domain/issues.js';
import { LIMITS, PRIORITY_BOUNDS, QUEUE_NAME, TODO_STATES, parseInput, type TodoState } from '../domain/todo.js';
import {
  batchIds,
  cancelBatch,
  countBulkMatches,
  finishBulkAudit,
  retryBatch,
  startBulkAudit,
  type BatchArgs,
  type BatchResult,
  type BulkFilterArgs,
} from '../store/todo-bulk-actions.js';
import { retryNow as retryRow } from '../store/todo-operator.js';
import type { TodoDeps } from './context.js';

const NUL = '\u0000';

export const BULK_ACTIONS = ['cancel', 'retry'] as const;
export type BulkActionName = (typeof BULK_ACTIONS)[number];

/**
 * Rows per batch statement, like the sweeps: large enough that 100k rows take 200 short
 * statements, small enough that a batch holds few row locks and commits in milliseconds,
 * so claimers skipping its rows barely notice it.
 */
export const BULK_BATCH_SIZE = 500;

const label = (max: number) =>
  z
    .string()
    .min(1, 'must not be empty')
    .refine((s) => !s.includes(NUL), 'must not contain NUL characters')
    .refine((s) => [...s].length <= max, `must be at most ${max} characters`);

const priority = z.number().int().min(PRIORITY_BOUNDS.min).max(PRIORITY_BOUNDS.max);

const instant = dateTime('must be RFC 3339 with a zone, e.g. 2026-01-31T09:00:00Z');

export const bulkFilterInput = z.strictObject({
  queue: z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}').optional(),
  state: z.enum(TODO_STATES).optional(),
  kind: label(LIMITS.kindChars).optional(),
  source: label(LIMITS.sourceChars).optional(),
  created_before: instant.optional().describe('Only todos created before this instant.'),
  created_after: instant.optional().describe('Only todos created after this instant.'),
  q: label(LIMITS.titleChars).optional().describe('A case-insensitive substring of the title.'),
  priority: priority.optional().describe('Only todos of exactly this priority.'),
  priority_min: priority.optional().describe('Only todos of this priority or higher.'),
});
export type BulkFilter = z.infer<typeof bulkFilterInput>;

export const bulkActionInput = z.strictObject({
  action: z.enum(BULK_ACTIONS),
  filter: bulkFilterInput,
  dry_run: z.boolean().optional(),
});
export type BulkActionInput = z.infer<typeof bulkActionInput>;

export interface BulkResult {
  action: BulkActionName;
  dry_run: boolean;
  /** Todos the filter matched when the action started. */
  matched: number;
  /** Todos this action changed (0 for a dry run). */
  changed: number;
}

/**
 * The states each action changes when the filter names none. A claimed todo is canceled
 * only when the filter asks for `state: "claimed"`: a session is working on it; a todo
 * waiting on a human only when it asks for `state: "waiting_on_human"`: a person owes it an answer.
 */
const DEFAULT_STATES: Record<BulkActionName, TodoState[]> = {
  cancel: ['pending', 'failed'],
  retry: ['failed', 'canceled'],
};
const ALLOWED_STATES: Record<BulkActionName, TodoState[]> = {
  cancel: ['pending', 'failed', 'claimed', 'waiting_on_human'],
  retry: ['failed', 'canceled'],
};

function statesFor(action: BulkActionName, state: TodoState | undefined): TodoState[] {
  if (state === undefined) return DEFAULT_STATES[action];
  if (!ALLOWED_STATES[action].includes(state)) {
    throw invalidArgument(
      'filter.state',
      `${action} applies to ${ALLOWED_STATES[action].join(', ')} todos, not ${state}`,
    );
  }
  return [state];
}

/** `q` as an ILIKE pattern: its own %, _ and \ match themselves. */
export function titlePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filterArgs(endpointId: string, data: BulkActionInput): BulkFilterArgs {
  const f = data.filter;
  return {
    endpointId,
    states: statesFor(data.action, f.state),
    queue: f.queue ?? null,
    kind: f.kind ?? null,
    source: f.source ?? null,
    createdBefore: f.created_before ? new Date(f.created_before) : null,
    createdAfter: f.created_after ? new Date(f.created_after) : null,
    titleLike: f.q ? titlePattern(f.q) : null,
    priority: f.priority ?? null,
    priorityMin: f.priority_min ?? null,
  };
}

/** Parses the input and checks its states, so a bad request fails before any read. */
export function parseBulkAction(input: unknown): {
  data: BulkActionInput;
  args: (endpointId: string) => BulkFilterArgs;
} {
  // parseInput names an unknown key without its parent; here the parent matters.
  const filter = (input as { filter?: unknown } | null)?.filter;
  if (filter && typeof filter === 'object' && !Array.isArray(filter)) {
    const unknown = Object.keys(filter).find((key) => !(key in bulkFilterInput.shape));
    if (unknown !== undefined) throw invalidArgument(`filter.${unknown}`, 'is not a known field');
  }
  const data = parseInput(bulkActionInput, input);
  statesFor(data.action, data.filter.state);
  return { data, args: (endpointId) => filterArgs(endpointId, data) };
}

/** A retry batch; when a live todo holds one of its keys, the batch's rows one at a time. */
async function retryOrEach(deps: TodoDeps, batch: BatchArgs): Promise<BatchResult> {
  try {
    return await retryBatch(deps.db, batch);
  } catch (err) {
    if (!isAppError(err, 'conflict')) throw err;
  }
  const ids = await batchIds(deps.db, batch);
  let changed = 0;
  for (const id of ids) {
    try {
      if (await retryRow(deps.db, batch.endpointId, id)) changed++;
    } catch (err) {
      if (!isAppError(err, 'conflict')) throw err;
    }
  }
  return { picked: ids.length, changed, last: ids.at(-1) ?? null };
}

/** Runs (or, with dry_run, counts) a bulk action over one endpoint's todos; audited when run. */
export async function bulkAction(
  deps: TodoDeps,
  endpointId: string,
  actorHumanId: string,
  input: unknown,
  batchSize = BULK_BATCH_SIZE,
): Promise<BulkResult> {
  const { data, args } = parseBulkAction(input);
  const filter = args(endpointId);
  const matched = await countBulkMatches(deps.db, filter);
  const dryRun = data.dry_run === true;
  if (dryRun) return { action: data.action, dry_run: true, matched, changed: 0 };
  const auditId = await startBulkAudit(deps.db, {
    endpointId,
    actorHumanId,
    action: data.action,
    filter: data.filter,
    matched,
  });
  let changed = 0;
  let after = '';
  for (;;) {
    const batch = { ...filter, after, limit: batchSize };
    const done = data.action === 'cancel' ? await cancelBatch(deps.db, batch) : await retryOrEach(deps, batch);
    changed += done.changed;
    if (done.picked < batchSize || done.last === null) break;
    after = done.last;
  }
  await finishBulkAudit(deps.db, auditId, changed);
  return { action: data.action, dry_run: false, matched, changed };
}
