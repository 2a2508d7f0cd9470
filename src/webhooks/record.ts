// One accepted delivery (or replay, or release) written down as routing decided it: its
// todos, its work-order key, its dedup id, its quarantine item and its event row in one
// transaction, so none ever exists without the others (docs/design/intake.md, "The event
// history"; docs/design/routing.md, "One transaction"). A redelivery rolls the
// transaction back and answers what its first delivery made. A route that cannot be
// carried out (a target endpoint gone, a queue it does not grant) rolls back too, and the
// event is recorded `faulted` in a transaction of its own.

import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Metrics } from '../metrics/index.js';
import type { QuotaDeps } from '../quotas/check.js';
import type { Decision, RoutingLimits, Target, TraceStep } from '../routing/rules.js';
import { insertEvent } from '../store/webhook-events.js';
import { claimDelivery, routeTargets, touchWebhook } from '../store/webhooks.js';
import { insertQuarantine } from '../store/quarantine.js';
import { claimWorkOrder } from '../store/work-orders.js';
import { createTodo, type TodoDeps } from '../todos/index.js';
import type { Tracing } from '../tracing/index.js';

/** What a delivery makes, read from its headers and body as its provider sends them. */
export interface Reading {
  kind: string | null;
  title: string;
  actor: string | null;
  payload: unknown;
  deliveryId: string | null;
}

export type Disposition = 'routed' | 'duplicate' | 'dropped' | 'quarantined' | 'faulted';

/** A delivery's answer (the contract of docs/design/intake.md, "A delivery's answer"). */
export interface Made {
  disposition: Disposition;
  todos: { id: string; queue: string; created: boolean; endpoint?: string }[];
  created: boolean;
  duplicate?: true;
  /** Null only for a redelivery of a delivery recorded before the event history existed. */
  event_id: string | null;
  /** The first todo's id; null when the event made none. */
  todo_id: string | null;
  /** Why nothing was made (dropped, quarantined, faulted, a held work order). */
  reason?: string;
  quarantine_id?: string;
}

export interface RecordDeps extends QuotaDeps {
  /** A pool (the delivery gets its own transaction) or a transaction's client (a savepoint in it). */
  db: Queryable;
  defaultLeaseSeconds: number;
  idempotencyWindowSeconds?: number;
  metrics?: Metrics;
  tracing?: Tracing;
  /** The settings that bound rules; absent: the defaults. */
  routing?: RoutingLimits;
  /** How long a work-order key holds, in seconds (SWITCHBOARD_WORK_ORDER_WINDOW). */
  workOrderSeconds?: number;
}

/** The webhook an event came through: its endpoint is the default target, its owner's endpoints the others. */
export interface EventWebhook {
  id: string | null;
  endpoint_id: string;
  queue: string;
  provider: string;
  human_id: string;
}

export interface RecordArgs {
  webhook: EventWebhook;
  reading: Reading;
  decision: Decision;
  verified: boolean;
  contentType: string | null;
  headers: Record<string, string>;
  payload: unknown;
  /** A delivery claims its id (a redelivery answers duplicate); a replay does not. */
  dedup: boolean;
  replayOf: string | null;
}

/** Seven days: a PR's head sha, an incident's id, is not worked twice within a week unless a human replays it. */
export const DEFAULT_WORK_ORDER_SECONDS = 7 * 86_400;

class Redelivered extends Error {
  constructor(readonly earlier: { todo_id: string | null; event_id: string | null }) {
    super('redelivered');
  }
}

/** A route the store refused (a target gone, a queue not granted): the event faults. */
class Unroutable extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** What createTodo refuses because of where a route points (ingest checked the payload itself first). */
const UNROUTABLE_CODES = new Set(['not_found', 'forbidden', 'failed_precondition']);

function todoDeps(deps: RecordDeps, tx: Queryable): TodoDeps {
  const d: TodoDeps = {
    db: tx,
    defaultLeaseSeconds: deps.defaultLeaseSeconds,
    ...(deps.quotas ? { quotas: deps.quotas } : {}),
    ...(deps.tracing ? { tracing: deps.tracing } : {}),
  };
  if (deps.idempotencyWindowSeconds !== undefined) d.idempotencyWindowSeconds = deps.idempotencyWindowSeconds;
  return d;
}

interface MadeTodo {
  id: string;
  queue: string;
  endpoint: string | null;
}

/**
 * Makes one todo per target, each on its own endpoint (the webhook's, or one of its
 * owner's by slug). Admission, quotas and rings apply per todo as for any create.
 */
export async function makeTodos(
  deps: RecordDeps,
  tx: Queryable,
  a: { webhook: EventWebhook; targets: Target[]; reading: Reading; eventId: string; ruleId: string },
): Promise<{ todos: MadeTodo[]; trace: TraceStep[] }> {
  const slugs = [...new Set(a.targets.flatMap((t) => (t.endpoint === null ? [] : [t.endpoint])))];
  const found = slugs.length === 0 ? [] : await routeTargets(tx, a.webhook.human_id, slugs);
  const idOf = new Map(found.map((e) => [e.slug, e.id]));
  const todos: MadeTodo[] = [];
  const trace: TraceStep[] = [];
  for (const t of a.targets) {
    const endpointId = t.endpoint === null ? a.webhook.endpoint_id : idOf.get(t.endpoint);
    if (endpointId === undefined) {
      throw new Unroutable('endpoints', `endpoint "${t.endpoint}" is not one of the webhook owner's live endpoints`);
    }
    const input = {
      queue: t.queue,
      title: t.title,
      payload: a.reading.payload,
      source: 'webhook',
      ...(t.kind === null ? {} : { kind: t.kind }),
      ...(t.priority === undefined ? {} : { priority: t.priority }),
      ...(t.not_before === undefined ? {} : { not_before: t.not_before }),
      ...(t.idempotency_key === undefined ? {} : { idempotency_key: t.idempotency_key }),
    };
    const sender = { webhookId: a.webhook.id ?? 'deleted', eventId: a.eventId };
    try {
      const { todo } = await createTodo(todoDeps(deps, tx), { endpointId }, sender, input);
      todos.push({ id: todo.id, queue: todo.queue, endpoint: t.endpoint });
      trace.push({ step: 'route', rule: a.ruleId, endpoint: t.endpoint, queue: todo.queue, todo_id: todo.id });
    } catch (err) {
      if (err instanceof AppError && UNROUTABLE_CODES.has(err.code)) {
        throw new Unroutable(
          t.endpoint === null ? 'queue' : 'endpoints',
          `${t.endpoint ?? 'own endpoint'}: ${err.message}`,
        );
      }
      throw err;
    }
  }
  return { todos, trace };
}

export async function recordEvent(deps: RecordDeps, a: RecordArgs): Promise<Made> {
  try {
    return await recordOnce(deps, a);
  } catch (err) {
    if (!(err instanceof Unroutable)) throw err;
    const d = a.decision;
    const fault: Decision = {
      disposition: 'faulted',
      rule: d.rule,
      field: err.field,
      error: err.message,
      trace: [...d.trace, { step: 'fault', rule: d.rule.id, field: err.field, error: err.message }],
    };
    return recordOnce(deps, { ...a, decision: fault });
  }
}

async function recordOnce(deps: RecordDeps, a: RecordArgs): Promise<Made> {
  const eventId = newId('ev');
  const { webhook, reading, decision } = a;
  let disposition: Disposition = decision.disposition;
  let reason: string | undefined;
  let quarantineId: string | undefined;
  try {
    const todos = await inTransaction(deps.db, async (tx) => {
      const trace = [...decision.trace];
      let made: MadeTodo[] = [];
      if (decision.disposition === 'routed') {
        const holder =
          decision.once !== null && webhook.id !== null
            ? await claimWorkOrder(tx, {
                endpointId: webhook.endpoint_id,
                webhookId: webhook.id,
                key: decision.once,
                eventId,
                holdSeconds: deps.workOrderSeconds ?? DEFAULT_WORK_ORDER_SECONDS,
              })
            : null;
        if (holder) {
          disposition = 'duplicate';
          reason = `work order "${decision.once}" is held by event ${holder.event_id}`;
          trace.push({ step: 'once', key: decision.once, duplicate_of: holder.event_id });
        } else {
          if (decision.once !== null) trace.push({ step: 'once', key: decision.once, claimed: true });
          const r = await makeTodos(deps, tx, {
            webhook,
            targets: decision.targets,
            reading,
            eventId,
            ruleId: decision.rule.id,
          });
          made = r.todos;
          trace.push(...r.trace);
        }
      } else if (decision.disposition === 'quarantined') {
        quarantineId = newId('qi');
        reason = decision.reason;
        await insertQuarantine(tx, {
          endpointId: webhook.endpoint_id,
          id: quarantineId,
          eventId,
          webhookId: webhook.id,
          actor: reading.actor,
          reason: decision.reason,
          ruleId: decision.rule.id,
          plan: decision.targets,
        });
        trace.push({ step: 'quarantine', id: quarantineId, reason: decision.reason });
      } else {
        reason = decision.disposition === 'dropped' ? decision.reason : `${decision.field}: ${decision.error}`;
      }
      if (a.dedup && reading.deliveryId !== null && webhook.id !== null) {
        const earlier = await claimDelivery(tx, {
          endpointId: webhook.endpoint_id,
          webhookId: webhook.id,
          deliveryId: reading.deliveryId,
          todoId: made[0]?.id ?? null,
          eventId,
        });
        if (earlier) throw new Redelivered(earlier);
      }
      await insertEvent(tx, {
        endpointId: webhook.endpoint_id,
        id: eventId,
        webhookId: webhook.id,
        provider: webhook.provider,
        queue: webhook.queue,
        eventType: reading.kind,
        deliveryId: reading.deliveryId,
        actor: reading.actor,
        verified: a.verified,
        contentType: a.contentType,
        headers: a.headers,
        payload: a.payload,
        todoIds: made.map((t) => t.id),
        trace,
        replayOf: a.replayOf,
        disposition,
      });
      if (webhook.id !== null) await touchWebhook(tx, webhook.endpoint_id, webhook.id);
      return made;
    });
    deps.metrics?.webhooks.dispositions.inc({ disposition });
    if (todos.length > 0) deps.metrics?.todosCreated.inc(todos.length);
    return {
      disposition,
      todos: todos.map((t) => ({
        id: t.id,
        queue: t.queue,
        created: true,
        ...(t.endpoint ? { endpoint: t.endpoint } : {}),
      })),
      created: todos.length > 0,
      event_id: eventId,
      todo_id: todos[0]?.id ?? null,
      ...(reason === undefined ? {} : { reason }),
      ...(quarantineId === undefined ? {} : { quarantine_id: quarantineId }),
    };
  } catch (err) {
    if (!(err instanceof Redelivered)) throw err;
    const { todo_id, event_id } = err.earlier;
    return {
      disposition: 'duplicate',
      todos: todo_id === null ? [] : [{ id: todo_id, queue: webhook.queue, created: false }],
      created: false,
      duplicate: true,
      event_id,
      todo_id,
    };
  }
}
