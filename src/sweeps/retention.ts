// Retention of the tables that only grow: closed MCP sessions, expired board sessions and
// spent setup links and CLI sign-in codes, dead API tokens, inbound webhook delivery ids
// and the webhook event history (by age, and each endpoint's newest N), quarantined events
// and work-order keys,
// the admission, bulk-action, human and grant audits, delivered hand-off replies, the per-minute queue rollups, dead OAuth
// rows, and doorbell ring records with self-test reports. One sweep per rule, each on the
// retention interval in claimed ticks (one instance a tick), each draining its table in
// bounded batches. Finished todos and admission windows keep their own sweeps
// (sweeps/todos.ts, sweeps/admission.ts); what counts as dead is decided in the store.

import type { RetentionConfig } from '../config/types.js';
import type { Queryable } from '../db/pool.js';
import { pruneCliLoginCodes } from '../store/cli-login.js';
import { pruneRings } from '../store/doorbell-rings.js';
import { pruneReports } from '../store/doorbell-tests.js';
import {
  pruneAdmissionAudit,
  pruneApiTokens,
  pruneBoardSessions,
  pruneClosedSessions,
  pruneSetupTokens,
  pruneWebhookDeliveries,
  type PruneArgs,
} from '../store/retention.js';
import { pruneGrantAudit } from '../store/grants.js';
import { pruneHumanAudit } from '../store/human-lifecycle.js';
import { pruneDeliveredReplies } from '../store/todo-links.js';
import {
  pruneLapsedGrants,
  pruneOAuthCodes,
  pruneOAuthTokens,
  pruneRevokedGrants,
  pruneUnusedClients,
} from '../store/oauth-retention.js';
import { pruneRollups } from '../store/queue-rollups.js';
import { pruneScheduleAudit } from '../store/schedules.js';
import { pruneBulkAudit } from '../store/todo-bulk-actions.js';
import { pruneEvents, recentEventEndpoints, trimEvents } from '../store/webhook-events.js';
import { expireQuarantine, pruneQuarantine } from '../store/quarantine.js';
import { pruneWorkOrders } from '../store/work-orders.js';
import type { Sweep } from './runner.js';

/** Rows per statement, and how many statements (or how long) one tick may run. */
export interface RetentionBounds {
  batch: number;
  maxBatches: number;
  maxMs?: number;
}

// 500 rows keep each statement's locks and WAL small. A tick drains until a batch comes
// back short, for at most 10 s: a count bound would cap what retention can delete per
// interval whatever the write rate (20 batches an hour is 10,000 rows, far below a busy
// queue's completions), while 10 s still lets shutdown, which waits for a running tick,
// end promptly. At 10–50 ms a batch that is 100,000–500,000 rows a tick; a faster
// SWITCHBOARD_RETENTION_INTERVAL keeps up with more.
export const RETENTION_BOUNDS: RetentionBounds = { batch: 500, maxBatches: Number.POSITIVE_INFINITY, maxMs: 10_000 };

type Prune = (db: Queryable, a: PruneArgs) => Promise<number>;

/** Runs one prune until a batch comes back short or the tick's bound (count or time) is reached. */
export async function drainPrune(
  db: Queryable,
  prune: Prune,
  keepMs: number,
  bounds: RetentionBounds,
): Promise<number> {
  const args = { olderThanSeconds: keepMs / 1000, limit: bounds.batch };
  const deadline = Date.now() + (bounds.maxMs ?? Number.POSITIVE_INFINITY);
  let total = 0;
  for (let i = 0; i < bounds.maxBatches && Date.now() < deadline; i++) {
    const n = await prune(db, args);
    total += n;
    if (n < bounds.batch) break;
  }
  return total;
}

/** A sweep that drains each (count name, prune, keep) in turn and reports the counts. */
function sweepOf(
  name: string,
  intervalMs: number,
  db: Queryable,
  bounds: RetentionBounds,
  rules: Array<[count: string, prune: Prune, keepMs: number]>,
): Sweep {
  return {
    name,
    intervalMs,
    async run() {
      const counts: Record<string, number> = {};
      for (const [count, prune, keepMs] of rules) counts[count] = await drainPrune(db, prune, keepMs, bounds);
      return counts;
    },
  };
}

/**
 * The per-endpoint cap of the event history (docs/design/intake.md, "Retention and the
 * cap"): every endpoint that received events in the last two intervals (a tick another
 * instance skipped is covered by the next) keeps its newest `keep`; older ones go in
 * batches, within the tick's time bound. Between ticks an endpoint may pass the cap by
 * what one interval brings, which the per-webhook rate bounds.
 */
export async function trimEventCaps(
  db: Queryable,
  keep: number,
  intervalMs: number,
  bounds: RetentionBounds,
): Promise<number> {
  const deadline = Date.now() + (bounds.maxMs ?? Number.POSITIVE_INFINITY);
  let total = 0;
  let batches = 0;
  for (const endpointId of await recentEventEndpoints(db, (2 * intervalMs) / 1000 + 60)) {
    while (batches < bounds.maxBatches && Date.now() < deadline) {
      batches++;
      const n = await trimEvents(db, { endpointId, keep, limit: bounds.batch });
      total += n;
      if (n < bounds.batch) break;
    }
  }
  return total;
}

/** Every retention sweep, for the composition root's SweepRunner. */
export function retentionSweeps(
  db: Queryable,
  intervalMs: number,
  keep: RetentionConfig,
  bounds: RetentionBounds = RETENTION_BOUNDS,
): Sweep[] {
  return [
    sweepOf('mcp_session_retention', intervalMs, db, bounds, [
      ['sessions_pruned', pruneClosedSessions, keep.mcpSessionsMs],
    ]),
    sweepOf('signin_retention', intervalMs, db, bounds, [
      ['board_sessions_pruned', pruneBoardSessions, keep.signInMs],
      ['setup_tokens_pruned', pruneSetupTokens, keep.signInMs],
      ['cli_login_codes_pruned', pruneCliLoginCodes, keep.signInMs],
    ]),
    sweepOf('api_token_retention', intervalMs, db, bounds, [['api_tokens_pruned', pruneApiTokens, keep.apiTokensMs]]),
    sweepOf('webhook_dedup_retention', intervalMs, db, bounds, [
      ['deliveries_pruned', pruneWebhookDeliveries, keep.webhookDeliveriesMs],
    ]),
    {
      name: 'webhook_event_retention',
      intervalMs,
      async run() {
        return {
          events_pruned: await drainPrune(db, pruneEvents, keep.webhookEventsMs, bounds),
          events_trimmed: await trimEventCaps(db, keep.webhookEventsPerEndpoint, intervalMs, bounds),
        };
      },
    },
    // Held items expire after the quarantine TTL; ended ones stay reviewable as long as the
    // events they held (docs/design/routing.md, "Retention"). Work-order keys go once expired.
    sweepOf('routing_retention', intervalMs, db, bounds, [
      ['quarantine_expired', expireQuarantine, keep.quarantineMs],
      ['quarantine_pruned', pruneQuarantine, Math.max(keep.quarantineMs, keep.webhookEventsMs)],
      ['work_orders_pruned', pruneWorkOrders, 0],
    ]),
    sweepOf('admission_audit_retention', intervalMs, db, bounds, [
      ['audit_pruned', pruneAdmissionAudit, keep.admissionAuditMs],
    ]),
    sweepOf('bulk_audit_retention', intervalMs, db, bounds, [
      ['bulk_audit_pruned', pruneBulkAudit, keep.admissionAuditMs],
    ]),
    sweepOf('schedule_audit_retention', intervalMs, db, bounds, [
      ['schedule_audit_pruned', pruneScheduleAudit, keep.admissionAuditMs],
    ]),
    sweepOf('human_audit_retention', intervalMs, db, bounds, [
      ['human_audit_pruned', pruneHumanAudit, keep.admissionAuditMs],
    ]),
    // Hand-offs (docs/design/handoff.md): the grant audit like the other audits; a
    // delivered reply's record like a ring's.
    sweepOf('handoff_retention', intervalMs, db, bounds, [
      ['grant_audit_pruned', pruneGrantAudit, keep.admissionAuditMs],
      ['replies_pruned', pruneDeliveredReplies, keep.doorbellMs],
    ]),
    sweepOf('rollup_retention', intervalMs, db, bounds, [['rollups_pruned', pruneRollups, keep.rollupsMs]]),
    // Tokens before grants (a grant's delete cascades to what is left of its tokens), grants
    // before clients (a client is pruned once it holds none).
    sweepOf('oauth_retention', intervalMs, db, bounds, [
      ['oauth_codes_pruned', pruneOAuthCodes, keep.oauthMs],
      ['oauth_tokens_pruned', pruneOAuthTokens, keep.oauthMs],
      ['oauth_grants_pruned', pruneRevokedGrants, keep.oauthMs],
      ['oauth_lapsed_grants_pruned', pruneLapsedGrants, keep.oauthMs + keep.oauthTokenLifeMs],
      ['oauth_clients_pruned', pruneUnusedClients, keep.oauthMs],
    ]),
    sweepOf('doorbell_retention', intervalMs, db, bounds, [
      ['rings_pruned', pruneRings, keep.doorbellMs],
      ['reports_pruned', pruneReports, keep.doorbellMs],
    ]),
  ];
}
