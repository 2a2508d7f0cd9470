// The schedule tick (docs/design/schedules.md, "The tick"): in one transaction, lock the
// due schedules (FOR UPDATE SKIP LOCKED), create one todo for each through the ordinary
// create use case (so validation, priority, doorbell and counts behave as for any todo),
// and move each next_run_at past now. The lock and the advance make each occurrence one
// todo however many instances tick; the idempotency key `schedule:<id>:<instant>` is the
// second guard. After downtime a schedule fires once, for its latest due occurrence, and
// records how many it stood in for (last_missed) with a log line: never a burst.

import type { QuotaDeps } from '../quotas/check.js';
import type { Logger } from 'pino';
import { Temporal } from 'temporal-polyfill';
import { withTx, type Pool, type Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { isAppError } from '../domain/errors.js';
import type { Metrics } from '../metrics/index.js';
import { claimDueSchedules, recordRun, type DueSchedule, type RunRecord } from '../store/schedules.js';
import { createTodo } from '../todos/index.js';
import { NO_TRACING, type Tracing } from '../tracing/index.js';
import { dueRun } from './occurrence.js';

export interface TickDeps extends QuotaDeps {
  pool: Pool;
  defaultLeaseSeconds: number;
  log: Logger;
  metrics?: Metrics;
  /** The instant a tick judges "due" by; the database clock when absent (tests move it). */
  clock?: () => Date;
  /**
   * Each occurrence starts a trace of its own (no request made it), which its todo stores
   * (docs/design/tracing.md, "A todo's trace"); absent: untraced.
   */
  tracing?: Tracing;
}

export interface TickCounts {
  fired: number;
  missed: number;
  failed: number;
}

// 100 schedules a transaction keep its row locks few and its duration short; 10 batches a
// tick (1,000 firings) cover any realistic minute while leaving the tick bounded.
const BATCH = 100;
const MAX_BATCHES = 10;

const instant = (d: Date) => Temporal.Instant.fromEpochMilliseconds(d.getTime());
const dateOf = (i: Temporal.Instant) => new Date(i.epochMilliseconds);

export async function runScheduleTick(deps: TickDeps): Promise<TickCounts> {
  const total: TickCounts = { fired: 0, missed: 0, failed: 0 };
  for (let i = 0; i < MAX_BATCHES; i++) {
    const { counts, claimed } = await withTx(deps.pool, (tx) => tickBatch(deps, tx));
    deps.metrics?.todosCreated.inc(counts.fired);
    total.fired += counts.fired;
    total.missed += counts.missed;
    total.failed += counts.failed;
    if (claimed < BATCH) break;
  }
  return total;
}

async function tickBatch(deps: TickDeps, tx: Queryable): Promise<{ counts: TickCounts; claimed: number }> {
  const { now, due } = await claimDueSchedules(tx, deps.clock?.() ?? null, BATCH);
  const counts: TickCounts = { fired: 0, missed: 0, failed: 0 };
  for (const schedule of due) {
    const record = await fire(deps, tx, schedule, now);
    if (record.lastTodoId !== null) counts.fired += 1;
    if (record.lastError !== null) counts.failed += 1;
    counts.missed += record.lastMissed;
    await recordRun(tx, record);
  }
  return { counts, claimed: due.length };
}

/** One due schedule: its todo (or why there is none) and its next run. */
async function fire(deps: TickDeps, tx: Queryable, s: DueSchedule, now: Date): Promise<RunRecord> {
  const base = { endpointId: s.endpoint_id, id: s.id };
  let run;
  try {
    run = dueRun({ cron: s.cron, tz: s.tz }, instant(s.next_run_at ?? now), instant(now));
  } catch (err) {
    // The zone left the zone database (or a bug): pause rather than retry every tick.
    deps.log.error({ schedule: s.id, err }, 'schedule paused: its next occurrence cannot be computed');
    const message = `paused: the next occurrence cannot be computed (${(err as Error).message})`;
    return { ...base, nextRunAt: null, lastRunAt: now, lastTodoId: null, lastMissed: 0, lastError: message };
  }
  const record = {
    ...base,
    nextRunAt: run.next && dateOf(run.next),
    lastRunAt: dateOf(run.fire),
    lastMissed: run.missed,
  };
  if (run.missed > 0) {
    deps.log.warn(
      { schedule: s.id, endpoint_id: s.endpoint_id, missed: run.missed, occurrence: run.fire.toString() },
      'schedule missed occurrences (downtime or pause): one todo stands in for them',
    );
  }
  const refused = refusal(s, now);
  if (refused) return { ...record, lastTodoId: null, lastError: refused };
  const tracing = deps.tracing ?? NO_TRACING;
  try {
    const todo = await tracing.run(
      'schedule occurrence',
      { root: true, attributes: { 'switchboard.schedule': s.id, 'switchboard.occurrence': run.fire.toString() } },
      () =>
        inTransaction(tx, (unit) =>
          createTodo(
            {
              db: unit,
              defaultLeaseSeconds: deps.defaultLeaseSeconds,
              ...(deps.metrics ? { metrics: deps.metrics } : {}),
              ...(deps.quotas ? { quotas: deps.quotas } : {}),
              tracing,
            },
            { endpointId: s.endpoint_id },
            { humanId: s.created_by_human_id, scheduleId: s.id },
            todoInput(s, run.fire),
          ),
        ),
    );
    return { ...record, lastTodoId: todo.todo.id, lastError: null };
  } catch (err) {
    if (!isAppError(err)) throw err;
    deps.log.warn({ schedule: s.id, err: { message: err.message } }, 'schedule made no todo');
    return { ...record, lastTodoId: null, lastError: err.message };
  }
}

/** Why this schedule's endpoint takes no todo now, or null. */
function refusal(s: DueSchedule, now: Date): string | null {
  if (!s.endpoint_active) return `no todo at ${now.toISOString()}: the endpoint is revoked or expired`;
  if (!s.endpoint_queues.includes(s.queue)) return `no todo: queue "${s.queue}" is not one of the endpoint's queues`;
  return null;
}

/** The create input of one occurrence: the schedule's template, keyed by the occurrence. */
function todoInput(s: DueSchedule, occurrence: Temporal.Instant): Record<string, unknown> {
  return {
    queue: s.queue,
    title: s.title,
    body: s.body,
    ...(s.payload === null ? {} : { payload: s.payload }),
    ...(s.kind === null ? {} : { kind: s.kind }),
    priority: s.priority,
    source: 'schedule',
    idempotency_key: `schedule:${s.id}:${occurrence.toString()}`,
  };
}
