// The quarantine as its reviewers see it (docs/design/routing.md, "Trusted actors and
// quarantine"): events a rule would have routed, from actors the webhook does not trust,
// held for the webhook owner (or a classifier agent explicitly granted the verbs). List
// and show them with the actor and the text that would have reached the agent; release
// one (routed as if trusted, under the rules as they are now, its todos made and rung like
// any other, in the transaction that marks it released and names who did); or discard it
// with a reason. The item row itself is the audit record: who resolved it, when, how.

import { z } from 'zod';
import { inTransaction } from '../db/tx.js';
import { AppError, notFound } from '../domain/errors.js';
import { maxLength } from '../domain/issues.js';
import { QUARANTINE_STATES } from '../domain/routing.js';
import { parseInput } from '../domain/todo.js';
import {
  listQuarantine as listRows,
  quarantineOf,
  resolveQuarantine,
  type QuarantineItem,
} from '../store/quarantine.js';
import { appendToEvent, eventOf } from '../store/webhook-events.js';
import { webhookRoutingOf, type WebhookOwner } from '../store/webhooks.js';
import { claimWorkOrder } from '../store/work-orders.js';
import { readingOf } from '../webhooks/ingest.js';
import { DEFAULT_WORK_ORDER_SECONDS, makeTodos, type RecordDeps } from '../webhooks/record.js';
import type { Provider } from '../webhooks/verify.js';
import { decideEvent, NO_ROUTING } from './route.js';
import type { TraceStep } from './rules.js';

export const listQuarantineInput = z.strictObject({
  state: z.enum(QUARANTINE_STATES).optional().describe('Only items in this state; default held.'),
  limit: z.number().int().min(1).max(200).optional().describe('How many, newest first (1–200, default 50).'),
});

export const discardInput = z.strictObject({
  reason: z.string().trim().min(1).check(maxLength(500)).describe('Why it is discarded (kept on the item).'),
});

function itemView(q: QuarantineItem) {
  return {
    id: q.id,
    event_id: q.event_id,
    webhook_id: q.webhook_id,
    actor: q.actor,
    reason: q.reason,
    rule_id: q.rule_id,
    state: q.state,
    would_make: q.plan,
    created_at: q.created_at,
    resolved_at: q.resolved_at,
    resolved_by: q.resolved_by,
    resolution: q.resolution,
    todo_ids: q.todo_ids,
  };
}

/** Who resolved an item, as the item records it: `human:<id>` or `endpoint:<slug or id>`. */
export type Reviewer = { humanId: string } | { endpointId: string };

const reviewerText = (r: Reviewer) => ('humanId' in r ? `human:${r.humanId}` : `endpoint:${r.endpointId}`);

/** GET /api/v1/quarantine: this owner's items, newest first (held unless `state` says otherwise). */
export async function listQuarantine(deps: { db: RecordDeps['db'] }, owner: WebhookOwner, query: unknown) {
  const data = parseInput(listQuarantineInput, query ?? {});
  const items = await listRows(deps.db, owner, { state: data.state ?? 'held', limit: data.limit ?? 50 });
  return { items: items.map(itemView) };
}

/** GET /api/v1/quarantine/{id}: the item, with the event it holds (what would have reached the agent). */
export async function showQuarantine(deps: { db: RecordDeps['db'] }, owner: WebhookOwner, id: string) {
  const item = await quarantineOf(deps.db, owner, id);
  if (!item) throw notFound('quarantine item', id);
  const event = await eventOf(deps.db, owner, item.event_id);
  return {
    item: {
      ...itemView(item),
      event: event && {
        id: event.id,
        provider: event.provider,
        type: event.type,
        actor: event.actor,
        received_at: event.received_at,
        headers: event.headers,
        payload: event.payload,
      },
    },
  };
}

function notHeld(item: QuarantineItem): AppError {
  return new AppError('conflict', `quarantine item ${item.id} is already ${item.state}`, { state: item.state });
}

/**
 * POST /api/v1/quarantine/{id}/release: routes the held event as if its actor were
 * trusted, under the webhook's rules as they are now. A rule may now drop it (nothing is
 * made) and a work order may be held by another event (nothing is made, as for a
 * duplicate); either way the item is released, and the answer says what happened.
 */
export async function releaseQuarantine(deps: RecordDeps, owner: WebhookOwner, id: string, by: Reviewer) {
  const result = await inTransaction(deps.db, async (tx) => {
    const item = await quarantineOf(tx, owner, id, true);
    if (!item) throw notFound('quarantine item', id);
    if (item.state !== 'held') throw notHeld(item);
    const event = await eventOf(tx, owner, item.event_id);
    if (!event) throw new AppError('failed_precondition', `its event ${item.event_id} is gone (past retention)`);
    const routing = item.webhook_id === null ? null : await webhookRoutingOf(tx, owner, item.webhook_id);
    const reading = readingOf(event.provider as Provider, (n) => event.headers[n], event.payload);
    const decision = decideEvent(
      routing ?? NO_ROUTING,
      {
        provider: event.provider,
        queue: event.queue,
        reading,
        headers: event.headers,
        payload: reading.payload,
        priority: undefined,
      },
      deps.routing,
      { asTrusted: true },
    );
    const trace: TraceStep[] = [
      { step: 'release', by: reviewerText(by), item: item.id, outcome: decision.disposition },
    ];
    let todos: { id: string; queue: string; endpoint: string | null }[] = [];
    if (decision.disposition === 'routed') {
      const webhook = {
        id: item.webhook_id,
        endpoint_id: item.endpoint_id,
        queue: event.queue,
        provider: event.provider,
        human_id: item.human_id,
      };
      const holder =
        decision.once !== null && item.webhook_id !== null
          ? await claimWorkOrder(tx, {
              endpointId: item.endpoint_id,
              webhookId: item.webhook_id,
              key: decision.once,
              eventId: event.id,
              holdSeconds: deps.workOrderSeconds ?? DEFAULT_WORK_ORDER_SECONDS,
            })
          : null;
      if (holder) {
        trace.push({ step: 'once', key: decision.once, duplicate_of: holder.event_id });
      } else {
        const made = await makeTodos(deps, tx, {
          webhook,
          targets: decision.targets,
          reading,
          eventId: event.id,
          ruleId: decision.rule.id,
        });
        todos = made.todos;
        trace.push(...made.trace);
      }
    }
    const todoIds = todos.map((t) => t.id);
    await resolveQuarantine(tx, {
      endpointId: item.endpoint_id,
      id: item.id,
      state: 'released',
      by: reviewerText(by),
      resolution: decision.disposition === 'routed' ? null : decision.disposition,
      todoIds,
    });
    await appendToEvent(tx, { endpointId: item.endpoint_id, id: event.id, todoIds, trace });
    return { todos, outcome: decision.disposition };
  });
  deps.metrics?.webhooks.quarantineResolved.inc({ outcome: 'released' });
  if (result.todos.length > 0) deps.metrics?.todosCreated.inc(result.todos.length);
  const after = await quarantineOf(deps.db, owner, id);
  return {
    todos: result.todos.map((t) => ({
      id: t.id,
      queue: t.queue,
      created: true,
      ...(t.endpoint ? { endpoint: t.endpoint } : {}),
    })),
    outcome: result.outcome,
    ...(after ? { item: itemView(after) } : {}),
  };
}

/** POST /api/v1/quarantine/{id}/discard {reason}: nothing is made, nothing rings; the reason is kept. */
export async function discardQuarantine(
  deps: RecordDeps,
  owner: WebhookOwner,
  id: string,
  by: Reviewer,
  input: unknown,
) {
  const data = parseInput(discardInput, input ?? {});
  await inTransaction(deps.db, async (tx) => {
    const item = await quarantineOf(tx, owner, id, true);
    if (!item) throw notFound('quarantine item', id);
    if (item.state !== 'held') throw notHeld(item);
    await resolveQuarantine(tx, {
      endpointId: item.endpoint_id,
      id: item.id,
      state: 'discarded',
      by: reviewerText(by),
      resolution: data.reason,
      todoIds: [],
    });
  });
  deps.metrics?.webhooks.quarantineResolved.inc({ outcome: 'discarded' });
  const after = await quarantineOf(deps.db, owner, id);
  return { item: after ? itemView(after) : null };
}
