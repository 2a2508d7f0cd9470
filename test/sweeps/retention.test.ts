// Pins retention of the tables that only grow: for each rule old dead rows go, young and
// live rows stay, deletion is bounded per statement and per tick, each statement reads
// through an index, and the sweeps run through the SweepRunner's claimed ticks.

import { pruneGrantAudit } from '../../src/store/grants.js';
import { pruneDeliveredReplies } from '../../src/store/todo-links.js';
import { expireQuarantine, pruneQuarantine } from '../../src/store/quarantine.js';
import { pruneWorkOrders } from '../../src/store/work-orders.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import type { Queryable } from '../../src/db/pool.js';
import { pruneCliLoginCodes } from '../../src/store/cli-login.js';
import { cleanupSynthetic, pruneReports } from '../../src/store/doorbell-tests.js';
import { pruneRings } from '../../src/store/doorbell-rings.js';
import {
  pruneAdmissionAudit,
  pruneApiTokens,
  pruneBoardSessions,
  pruneClosedSessions,
  pruneSetupTokens,
  pruneWebhookDeliveries,
  type PruneArgs,
} from '../../src/store/retention.js';
import { pruneHumanAudit } from '../../src/store/human-lifecycle.js';
import {
  pruneLapsedGrants,
  pruneOAuthCodes,
  pruneOAuthTokens,
  pruneRevokedGrants,
  pruneUnusedClients,
} from '../../src/store/oauth-retention.js';
import { pruneScheduleAudit } from '../../src/store/schedules.js';
import { pruneBulkAudit } from '../../src/store/todo-bulk-actions.js';
import { pruneEvents, trimEvents } from '../../src/store/webhook-events.js';
import { drainPrune, retentionSweeps, trimEventCaps, type RetentionBounds } from '../../src/sweeps/retention.js';
import { SweepRunner } from '../../src/sweeps/runner.js';
import { testDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';
import * as rows from './retention-rows.js';

const { pool: db } = await testDatabase('retention');
const parsed = parseConfig({});
assert.ok(parsed.ok);
/** The documented defaults: sessions, sign-ins and doorbell 7d; tokens, deliveries and audit 30d. */
const keep = parsed.config.retention;
const FULL: RetentionBounds = { batch: 500, maxBatches: 100 };
const HOUR = 60_000 * 60;

function sweepNamed(name: string, bounds: RetentionBounds = FULL) {
  const sweep = retentionSweeps(db, HOUR, keep, bounds).find((s) => s.name === name);
  assert.ok(sweep, `no retention sweep named ${name}`);
  return sweep;
}

test('the retention settings default to 7 days for sessions, sign-ins, OAuth rows and doorbell records, 2 days for queue rollups and 30 days for the rest', () => {
  assert.deepEqual(keep, {
    mcpSessionsMs: 7 * 86_400_000,
    signInMs: 7 * 86_400_000,
    apiTokensMs: 30 * 86_400_000,
    webhookDeliveriesMs: 30 * 86_400_000,
    webhookEventsMs: 30 * 86_400_000,
    webhookEventsPerEndpoint: 10_000,
    quarantineMs: 30 * 86_400_000,
    doorbellMs: 7 * 86_400_000,
    admissionAuditMs: parsed.config.sweeps.retentionMs,
    rollupsMs: 2 * 86_400_000,
    oauthMs: 7 * 86_400_000,
    oauthTokenLifeMs: 30 * 86_400_000,
  });
  const names = retentionSweeps(db, HOUR, keep).map((s) => s.name);
  assert.equal(new Set(names).size, names.length, `sweep names are unique: ${names.join(', ')}`);
});

test('closed sessions past retention go with their queue lock; young closed, open and claim-holding sessions stay', async () => {
  const ep = await makeEndpoint(db);
  const old = await rows.session(db, ep.id, '-8 days');
  const young = await rows.session(db, ep.id, '-6 days');
  const open = await rows.session(db, ep.id, null);
  await rows.queuedMessage(db, ep.id, open);
  const holder = await rows.session(db, ep.id, '-8 days');
  const held = await rows.claimedTodo(db, ep.id, holder);
  assert.ok(await rows.exists(db, 'queue_session_locks', 'endpoint_id = $1 AND session_id = $2', [ep.id, old]));

  const counts = await sweepNamed('mcp_session_retention').run();
  assert.deepEqual(counts, { sessions_pruned: 1 });
  const left = await db.query<{ id: string }>('SELECT id FROM mcp_sessions WHERE endpoint_id = $1 ORDER BY id', [
    ep.id,
  ]);
  assert.deepEqual(left.rows.map((r) => r.id).sort(), [young, open, holder].sort());
  assert.ok(!(await rows.exists(db, 'queue_session_locks', 'endpoint_id = $1 AND session_id = $2', [ep.id, old])));
  assert.equal(await rows.count(db, 'queued_messages WHERE session_id = $1', [open]), 1, 'a live queue is untouched');

  // Once its todo is no longer claimed (the lease lapsed and the reaper requeued it), it goes too.
  await db.query(
    `UPDATE todos SET state = 'pending', owner_session_id = NULL, lease_expires_at = NULL WHERE endpoint_id = $1 AND id = $2`,
    [ep.id, held],
  );
  assert.deepEqual(await sweepNamed('mcp_session_retention').run(), { sessions_pruned: 1 });
  assert.ok(!(await rows.exists(db, 'mcp_sessions', 'endpoint_id = $1 AND id = $2', [ep.id, holder])));
});

test('expired board sessions and spent or expired setup links go after the sign-in retention; live and young ones stay', async () => {
  const { human_id: human } = await makeEndpoint(db);
  const oldSession = await rows.boardSession(db, human, '-8 days');
  const youngSession = await rows.boardSession(db, human, '-6 days');
  const liveSession = await rows.boardSession(db, human, '1 day');
  const spentLongAgo = await rows.setupToken(db, human, { usedAt: '-9 days', expiresAt: '-2 days' });
  const expiredLongAgo = await rows.setupToken(db, human, { usedAt: null, expiresAt: '-8 days' });
  const spentRecently = await rows.setupToken(db, human, { usedAt: '-1 day', expiresAt: '6 days' });
  const unspent = await rows.setupToken(db, human, { usedAt: null, expiresAt: '1 hour' });

  assert.deepEqual(await sweepNamed('signin_retention').run(), {
    board_sessions_pruned: 1,
    setup_tokens_pruned: 2,
    cli_login_codes_pruned: 0,
  });
  const sessions = await db.query<{ token_hash: Buffer }>('SELECT token_hash FROM board_sessions WHERE human_id = $1', [
    human,
  ]);
  const hex = (bs: Buffer[]) => bs.map((b) => b.toString('hex')).sort();
  assert.deepEqual(hex(sessions.rows.map((r) => r.token_hash)), hex([youngSession, liveSession]));
  assert.ok(!sessions.rows.some((r) => r.token_hash.equals(oldSession)));
  const tokens = await db.query<{ token_hash: Buffer }>('SELECT token_hash FROM setup_tokens WHERE human_id = $1', [
    human,
  ]);
  assert.deepEqual(hex(tokens.rows.map((r) => r.token_hash)), hex([spentRecently, unspent]));
  assert.ok(!tokens.rows.some((r) => r.token_hash.equals(spentLongAgo) || r.token_hash.equals(expiredLongAgo)));
});

test('CLI sign-in codes expired before the sign-in retention go, spent or not; younger and live ones stay', async () => {
  const { human_id: human } = await makeEndpoint(db);
  const spentLongAgo = await rows.cliLoginCode(db, human, { usedAt: '-8 days', expiresAt: '-8 days' });
  const expiredLongAgo = await rows.cliLoginCode(db, human, { usedAt: null, expiresAt: '-8 days' });
  const spentRecently = await rows.cliLoginCode(db, human, { usedAt: '-6 days', expiresAt: '-6 days' });
  const expiredRecently = await rows.cliLoginCode(db, human, { usedAt: null, expiresAt: '-1 hour' });
  const live = await rows.cliLoginCode(db, human, { usedAt: null, expiresAt: '30 seconds' });

  const counts = await sweepNamed('signin_retention').run();
  assert.equal(counts?.cli_login_codes_pruned, 2);
  const left = await db.query<{ hash: Buffer }>('SELECT hash FROM cli_login_codes WHERE human_id = $1', [human]);
  const hex = (bs: Buffer[]) => bs.map((b) => b.toString('hex')).sort();
  assert.deepEqual(hex(left.rows.map((r) => r.hash)), hex([spentRecently, expiredRecently, live]));
  assert.ok(!left.rows.some((r) => r.hash.equals(spentLongAgo) || r.hash.equals(expiredLongAgo)));
});

test('revoked and expired API tokens go after their grace, counted from whichever came first; live ones stay', async () => {
  const { human_id: human } = await makeEndpoint(db);
  const revokedLongAgo = await rows.apiToken(db, human, { revokedAt: '-31 days', expiresAt: null });
  const expiredLongAgo = await rows.apiToken(db, human, { revokedAt: null, expiresAt: '-31 days' });
  const expiredThenRevoked = await rows.apiToken(db, human, { revokedAt: '-1 day', expiresAt: '-40 days' });
  const revokedRecently = await rows.apiToken(db, human, { revokedAt: '-29 days', expiresAt: null });
  const neverExpires = await rows.apiToken(db, human, { revokedAt: null, expiresAt: null });
  const unexpired = await rows.apiToken(db, human, { revokedAt: null, expiresAt: '1 day' });

  assert.deepEqual(await sweepNamed('api_token_retention').run(), { api_tokens_pruned: 3 });
  const left = await db.query<{ id: string }>('SELECT id FROM api_tokens WHERE human_id = $1', [human]);
  assert.deepEqual(left.rows.map((r) => r.id).sort(), [revokedRecently, neverExpires, unexpired].sort());
  for (const gone of [revokedLongAgo, expiredLongAgo, expiredThenRevoked])
    assert.ok(!left.rows.some((r) => r.id === gone), gone);
});

test("webhook delivery ids outlive a sender's 3 days of retries and go after the dedup retention", async () => {
  const ep = await makeEndpoint(db);
  const hook = await rows.webhook(db, ep.id);
  const old = await rows.delivery(db, ep.id, hook, '-31 days');
  const pastRetries = await rows.delivery(db, ep.id, hook, '-5 days');
  const fresh = await rows.delivery(db, ep.id, hook, '-1 minute');

  assert.deepEqual(await sweepNamed('webhook_dedup_retention').run(), { deliveries_pruned: 1 });
  const left = await db.query<{ delivery_id: string }>(
    'SELECT delivery_id FROM webhook_deliveries WHERE endpoint_id = $1',
    [ep.id],
  );
  assert.deepEqual(left.rows.map((r) => r.delivery_id).sort(), [pastRetries, fresh].sort());
  assert.ok(!left.rows.some((r) => r.delivery_id === old));
});

test('admission audit entries follow SWITCHBOARD_RETENTION (30 days) and the policies themselves are untouched', async () => {
  const ep = await makeEndpoint(db);
  await db.query(
    `INSERT INTO admission_policies (endpoint_id, queue, max_in_flight, created_by_human_id, updated_by_human_id)
     VALUES ($1, 'inbox', 2, $2, $2)`,
    [ep.id, ep.human_id],
  );
  const old = await rows.auditEntry(db, ep.id, ep.human_id, '-31 days');
  const young = await rows.auditEntry(db, ep.id, ep.human_id, '-29 days');

  assert.deepEqual(await sweepNamed('admission_audit_retention').run(), { audit_pruned: 1 });
  const left = await db.query<{ id: number }>('SELECT id FROM admission_policy_audit WHERE endpoint_id = $1', [ep.id]);
  assert.deepEqual(
    left.rows.map((r) => r.id),
    [young],
  );
  assert.notEqual(old, young);
  assert.equal(await rows.count(db, 'admission_policies WHERE endpoint_id = $1', [ep.id]), 1);
});

test('decided rings and finished self-tests go after the doorbell retention; open rings, outstanding tests and young rows stay', async () => {
  const ep = await makeEndpoint(db);
  const ackedOld = await rows.ring(db, ep.id, '-8 days', 'acked');
  const unheardOld = await rows.ring(db, ep.id, '-8 days', 'unheard');
  const openOld = await rows.ring(db, ep.id, '-8 days', 'open');
  const ackedYoung = await rows.ring(db, ep.id, '-6 days', 'acked');
  const reportOld = await rows.selfTest(db, ep.id, '-8 days', true);
  const reportYoung = await rows.selfTest(db, ep.id, '-6 days', true);
  const outstanding = await rows.selfTest(db, ep.id, '-8 days', false);

  assert.deepEqual(await sweepNamed('doorbell_retention').run(), { rings_pruned: 2, reports_pruned: 1 });
  const rings = await db.query<{ id: string }>('SELECT id FROM doorbell_rings WHERE endpoint_id = $1', [ep.id]);
  assert.deepEqual(rings.rows.map((r) => r.id).sort(), [openOld, ackedYoung].sort());
  for (const gone of [ackedOld, unheardOld]) assert.ok(!rings.rows.some((r) => r.id === gone), gone);
  const tests = await db.query<{ id: string }>('SELECT id FROM doorbell_tests WHERE endpoint_id = $1', [ep.id]);
  assert.deepEqual(tests.rows.map((r) => r.id).sort(), [reportYoung, outstanding].sort());
  assert.ok(!tests.rows.some((r) => r.id === reportOld));
});

test("the self-test sweep's synthetic cleanup deletes todos of expired tests only", async () => {
  const ep = await makeEndpoint(db);
  const insert = (id: string) =>
    db.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, synthetic, ready_at) VALUES ($1, $2, 'inbox', 't', true, NULL)`,
      [ep.id, id],
    );
  await insert('td-orphan');
  await insert('td-live');
  await db.query(
    `INSERT INTO doorbell_tests (endpoint_id, id, todo_id, wait_seconds, expires_at, started_via)
     VALUES ($1, 'dt-live', 'td-live', 60, now() + interval '1 minute', 'api')`,
    [ep.id],
  );
  assert.equal(await cleanupSynthetic(db, 500), 1);
  const left = await db.query<{ id: string }>('SELECT id FROM todos WHERE endpoint_id = $1', [ep.id]);
  assert.deepEqual(
    left.rows.map((r) => r.id),
    ['td-live'],
  );
});

interface Rule {
  sweep: string;
  count: string;
  prune: (db: Queryable, a: PruneArgs) => Promise<number>;
  keepMs: number;
  table: string;
  /**
   * The column naming the test's own rows: its endpoint, or the endpoint's human; or a
   * condition on $1, the endpoint's id (OAuth rows hang off a grant or carry no owner).
   */
  owner: 'endpoint_id' | 'human_id' | { where: string };
  /** Inserts one row dead for longer than the retention, owned by the endpoint (or its human). */
  old: (ep: { id: string; human_id: string }, hook: string) => Promise<unknown>;
}

/** The condition selecting the rule's rows of this endpoint (or its human), and its parameter. */
function ownRows(rule: Rule, ep: { id: string; human_id: string }): [string, string] {
  if (typeof rule.owner === 'object') return [rule.owner.where, ep.id];
  return [`${rule.owner} = $1`, rule.owner === 'endpoint_id' ? ep.id : ep.human_id];
}

/** The rule's rows of this endpoint (or its human) still in the table. */
function left(rule: Rule, ep: { id: string; human_id: string }): Promise<number> {
  const [where, param] = ownRows(rule, ep);
  return rows.count(db, `${rule.table} WHERE ${where}`, [param]);
}

const RULES: Rule[] = [
  {
    sweep: 'mcp_session_retention',
    count: 'sessions_pruned',
    prune: pruneClosedSessions,
    keepMs: keep.mcpSessionsMs,
    old: (ep) => rows.session(db, ep.id, '-8 days'),
    table: 'mcp_sessions',
    owner: 'endpoint_id',
  },
  {
    sweep: 'signin_retention',
    count: 'board_sessions_pruned',
    prune: pruneBoardSessions,
    keepMs: keep.signInMs,
    old: (ep) => rows.boardSession(db, ep.human_id, '-8 days'),
    table: 'board_sessions',
    owner: 'human_id',
  },
  {
    sweep: 'signin_retention',
    count: 'setup_tokens_pruned',
    prune: pruneSetupTokens,
    keepMs: keep.signInMs,
    old: (ep) => rows.setupToken(db, ep.human_id, { usedAt: '-8 days', expiresAt: '-7 days' }),
    table: 'setup_tokens',
    owner: 'human_id',
  },
  {
    sweep: 'signin_retention',
    count: 'cli_login_codes_pruned',
    prune: pruneCliLoginCodes,
    keepMs: keep.signInMs,
    old: (ep) => rows.cliLoginCode(db, ep.human_id, { usedAt: '-8 days', expiresAt: '-8 days' }),
    table: 'cli_login_codes',
    owner: 'human_id',
  },
  {
    sweep: 'api_token_retention',
    count: 'api_tokens_pruned',
    prune: pruneApiTokens,
    keepMs: keep.apiTokensMs,
    old: (ep) => rows.apiToken(db, ep.human_id, { revokedAt: '-31 days', expiresAt: null }),
    table: 'api_tokens',
    owner: 'human_id',
  },
  {
    sweep: 'webhook_dedup_retention',
    count: 'deliveries_pruned',
    prune: pruneWebhookDeliveries,
    keepMs: keep.webhookDeliveriesMs,
    old: (ep, hook) => rows.delivery(db, ep.id, hook, '-31 days'),
    table: 'webhook_deliveries',
    owner: 'endpoint_id',
  },
  {
    sweep: 'webhook_event_retention',
    count: 'events_pruned',
    prune: pruneEvents,
    keepMs: keep.webhookEventsMs,
    old: (ep, hook) => rows.event(db, ep.id, hook, '-31 days'),
    table: 'webhook_events',
    owner: 'endpoint_id',
  },
  {
    sweep: 'admission_audit_retention',
    count: 'audit_pruned',
    prune: pruneAdmissionAudit,
    keepMs: keep.admissionAuditMs,
    old: (ep) => rows.auditEntry(db, ep.id, ep.human_id, '-31 days'),
    table: 'admission_policy_audit',
    owner: 'endpoint_id',
  },
  {
    sweep: 'bulk_audit_retention',
    count: 'bulk_audit_pruned',
    prune: pruneBulkAudit,
    keepMs: keep.admissionAuditMs,
    old: async (ep) => {
      await db.query(
        `INSERT INTO todo_bulk_audit (endpoint_id, actor_human_id, action, filter, matched, at)
         VALUES ($1, $2, 'cancel', '{}', 0, now() - interval '31 days')`,
        [ep.id, ep.human_id],
      );
    },
    table: 'todo_bulk_audit',
    owner: 'endpoint_id',
  },
  {
    sweep: 'schedule_audit_retention',
    count: 'schedule_audit_pruned',
    prune: pruneScheduleAudit,
    keepMs: keep.admissionAuditMs,
    old: async (ep) => {
      await db.query(
        `INSERT INTO schedule_audit (schedule_id, endpoint_id, actor_human_id, action, changes, at)
         VALUES ('sc_gone', $1, $2, 'delete', '{}', now() - interval '31 days')`,
        [ep.id, ep.human_id],
      );
    },
    table: 'schedule_audit',
    owner: 'endpoint_id',
  },
  {
    sweep: 'human_audit_retention',
    count: 'human_audit_pruned',
    prune: pruneHumanAudit,
    keepMs: keep.admissionAuditMs,
    old: async (ep) => {
      await db.query(
        `INSERT INTO human_audit (human_id, actor_human_id, action, at)
         VALUES ($1, $1, 'disable', now() - interval '31 days')`,
        [ep.human_id],
      );
    },
    table: 'human_audit',
    owner: 'human_id',
  },
  {
    sweep: 'handoff_retention',
    count: 'grant_audit_pruned',
    prune: pruneGrantAudit,
    keepMs: keep.admissionAuditMs,
    old: async (ep) => {
      await db.query(
        `INSERT INTO grant_audit (grant_id, from_human_id, to_human_id, actor_human_id, action, at)
         VALUES ('gr_gone', $1, $1, $1, 'revoke', now() - interval '31 days')`,
        [ep.human_id],
      );
    },
    table: 'grant_audit',
    owner: { where: 'from_human_id = (SELECT human_id FROM endpoints WHERE id = $1)' },
  },
  {
    sweep: 'handoff_retention',
    count: 'replies_pruned',
    prune: pruneDeliveredReplies,
    keepMs: keep.doorbellMs,
    old: async (ep) => {
      await db.query(
        `INSERT INTO handoff_replies (child_endpoint_id, child_id, endpoint_id, reply_queue, state, delivered_at, delivered_as)
         VALUES ($1, 'td_' || gen_random_uuid(), $1, 'inbox', 'done', now() - interval '8 days', 'message')`,
        [ep.id],
      );
    },
    table: 'handoff_replies',
    owner: 'endpoint_id',
  },
  {
    sweep: 'doorbell_retention',
    count: 'rings_pruned',
    prune: pruneRings,
    keepMs: keep.doorbellMs,
    old: (ep) => rows.ring(db, ep.id, '-8 days', 'acked'),
    table: 'doorbell_rings',
    owner: 'endpoint_id',
  },
  {
    sweep: 'doorbell_retention',
    count: 'reports_pruned',
    prune: pruneReports,
    keepMs: keep.doorbellMs,
    old: (ep) => rows.selfTest(db, ep.id, '-8 days', true),
    table: 'doorbell_tests',
    owner: 'endpoint_id',
  },
  ...routingRules(),
  ...oauthRules(),
];

/** Held quarantine items expire (their state changes); ended ones and expired work-order keys are deleted. */
function routingRules(): Rule[] {
  const item = (ep: { id: string }, state: string, age: string) =>
    db.query(
      `INSERT INTO quarantine_items (endpoint_id, id, event_id, reason, state, created_at)
       VALUES ($1, 'qi_' || gen_random_uuid(), 'ev_x', 'untrusted', $2, now() - $3::interval)`,
      [ep.id, state, age],
    );
  return [
    {
      sweep: 'routing_retention',
      count: 'quarantine_expired',
      prune: expireQuarantine,
      keepMs: keep.quarantineMs,
      old: (ep) => item(ep, 'held', '31 days'),
      table: 'quarantine_items',
      owner: { where: `endpoint_id = $1 AND state = 'held'` },
    },
    {
      sweep: 'routing_retention',
      count: 'quarantine_pruned',
      prune: pruneQuarantine,
      keepMs: Math.max(keep.quarantineMs, keep.webhookEventsMs),
      old: (ep) => item(ep, 'discarded', '31 days'),
      table: 'quarantine_items',
      owner: 'endpoint_id',
    },
    {
      sweep: 'routing_retention',
      count: 'work_orders_pruned',
      prune: pruneWorkOrders,
      keepMs: 0,
      old: (ep, hook) =>
        db.query(
          `INSERT INTO webhook_work_orders (endpoint_id, webhook_id, key, event_id, expires_at)
           VALUES ($1, $2, gen_random_uuid()::text, 'ev_x', now() - interval '1 day')`,
          [ep.id, hook],
        ),
      table: 'webhook_work_orders',
      owner: 'endpoint_id',
    },
  ];
}

/** The OAuth rows hang off a grant of the test's endpoint; clients carry its id as their name. */
function oauthRules(): Rule[] {
  const ofGrant = { where: 'grant_id IN (SELECT id FROM oauth_grants WHERE endpoint_id = $1)' };
  const ofEndpoint = { where: 'endpoint_id = $1' };
  const rule = (count: string, prune: Rule['prune'], table: string, owner: Rule['owner'], old: Rule['old']) => ({
    sweep: 'oauth_retention',
    count,
    prune,
    keepMs: count === 'oauth_lapsed_grants_pruned' ? keep.oauthMs + keep.oauthTokenLifeMs : keep.oauthMs,
    old,
    table,
    owner,
  });
  const liveGrant = (ep: { id: string; human_id: string }) => rows.oauthGrant(db, ep, { lastUsedAt: '-1 hour' });
  return [
    rule('oauth_codes_pruned', pruneOAuthCodes, 'oauth_codes', ofGrant, async (ep) =>
      rows.oauthCode(db, await liveGrant(ep), '-8 days'),
    ),
    rule('oauth_tokens_pruned', pruneOAuthTokens, 'oauth_tokens', ofGrant, async (ep) =>
      rows.oauthToken(db, await liveGrant(ep), 'refresh', '-8 days'),
    ),
    rule('oauth_grants_pruned', pruneRevokedGrants, 'oauth_grants', ofEndpoint, (ep) =>
      rows.oauthGrant(db, ep, { lastUsedAt: '-9 days', revokedAt: '-8 days' }),
    ),
    rule('oauth_lapsed_grants_pruned', pruneLapsedGrants, 'oauth_grants', ofEndpoint, (ep) =>
      rows.oauthGrant(db, ep, { lastUsedAt: '-38 days' }),
    ),
    rule('oauth_clients_pruned', pruneUnusedClients, 'oauth_clients', { where: 'client_name = $1' }, (ep) =>
      rows.oauthClient(db, ep.id, '-8 days'),
    ),
  ];
}

test('OAuth retention: dead codes, tokens, revoked and lapsed grants and unused clients go; live ones stay', async () => {
  const ep = await makeEndpoint(db);
  const client = await rows.oauthClient(db, ep.id, '-90 days');
  const live = await rows.oauthGrant(db, ep, { clientId: client, lastUsedAt: '-2 days' });
  await rows.oauthCode(db, live, '-8 days');
  await rows.oauthCode(db, live, '-6 days');
  await rows.oauthToken(db, live, 'access', '-8 days');
  await rows.oauthToken(db, live, 'refresh', '28 days');
  // Revoked 8 days ago: gone, with its token (cascade); revoked 6 days ago: kept for now.
  const revokedOld = await rows.oauthGrant(db, ep, { clientId: client, lastUsedAt: '-9 days', revokedAt: '-8 days' });
  await rows.oauthToken(db, revokedOld, 'refresh', '20 days');
  const revokedYoung = await rows.oauthGrant(db, ep, { clientId: client, lastUsedAt: '-9 days', revokedAt: '-6 days' });
  // Last pair 38 days ago (30 days of refresh token + 7 of retention): lapsed; 36 days: not yet.
  const lapsed = await rows.oauthGrant(db, ep, { clientId: client, lastUsedAt: '-38 days' });
  const lapsing = await rows.oauthGrant(db, ep, { clientId: client, lastUsedAt: '-36 days' });
  // Approved 38 days ago and never exchanged: lapsed too.
  const neverUsed = await rows.oauthGrant(db, ep, { clientId: client, createdAt: '-38 days', lastUsedAt: null });
  const unused = await rows.oauthClient(db, ep.id, '-8 days');
  const fresh = await rows.oauthClient(db, ep.id, '-1 day');

  const counts = await sweepNamed('oauth_retention').run();
  assert.deepEqual(counts, {
    oauth_codes_pruned: 1,
    oauth_tokens_pruned: 1,
    oauth_grants_pruned: 1,
    oauth_lapsed_grants_pruned: 2,
    oauth_clients_pruned: 1,
  });
  const grants = await db.query<{ id: string }>('SELECT id FROM oauth_grants WHERE endpoint_id = $1', [ep.id]);
  assert.deepEqual(grants.rows.map((r) => r.id).sort(), [live, revokedYoung, lapsing].sort());
  assert.ok(!grants.rows.some((r) => r.id === revokedOld || r.id === lapsed || r.id === neverUsed));
  assert.equal(await rows.count(db, 'oauth_tokens WHERE grant_id = $1', [revokedOld]), 0, 'cascaded');
  assert.equal(await rows.count(db, 'oauth_tokens WHERE grant_id = $1', [live]), 1, 'the live refresh token');
  assert.equal(await rows.count(db, 'oauth_codes WHERE grant_id = $1', [live]), 1, 'the young expired code');
  const clients = await db.query<{ id: string }>('SELECT id FROM oauth_clients WHERE client_name = $1', [ep.id]);
  assert.deepEqual(clients.rows.map((r) => r.id).sort(), [client, fresh].sort());
  assert.ok(!clients.rows.some((r) => r.id === unused));
});

test('every rule deletes in batches: with a batch of 2 and 5 dead rows a statement deletes 2 and a tick stops at its bound', async (t) => {
  for (const rule of RULES) {
    await t.test(`${rule.sweep}: ${rule.count}`, async () => {
      // Rows other tests left dead would share the batches: clear them first.
      await drainPrune(db, rule.prune, rule.keepMs, FULL);
      const ep = await makeEndpoint(db);
      const hook = await rows.webhook(db, ep.id);
      for (let i = 0; i < 5; i++) await rule.old(ep, hook);
      assert.equal(await left(rule, ep), 5);

      assert.equal(await rule.prune(db, { olderThanSeconds: rule.keepMs / 1000, limit: 2 }), 2, 'one statement');
      assert.equal(await left(rule, ep), 3);
      const oneBatchATick = await sweepNamed(rule.sweep, { batch: 2, maxBatches: 1 }).run();
      assert.equal(oneBatchATick?.[rule.count], 2, 'a tick of one batch stops with rows left');
      assert.equal(await left(rule, ep), 1);
      const drained = await sweepNamed(rule.sweep, { batch: 2, maxBatches: 20 }).run();
      assert.equal(drained?.[rule.count], 1, 'a short batch ends the tick');
      assert.equal(await left(rule, ep), 0);
    });
  }
});

test('every rule skips a dead row another transaction holds locked instead of waiting for it', async (t) => {
  for (const rule of RULES) {
    await t.test(`${rule.sweep}: ${rule.count}`, async () => {
      await drainPrune(db, rule.prune, rule.keepMs, FULL);
      const ep = await makeEndpoint(db);
      const hook = await rows.webhook(db, ep.id);
      for (let i = 0; i < 2; i++) await rule.old(ep, hook);
      const holder = await db.connect();
      const sweeper = await db.connect();
      try {
        await holder.query('BEGIN');
        const [where, param] = ownRows(rule, ep);
        await holder.query(`SELECT 1 FROM ${rule.table} WHERE ${where} LIMIT 1 FOR UPDATE`, [param]);
        // A statement that waited on the lock would fail here instead of returning.
        await sweeper.query(`SET statement_timeout = '3s'`);
        assert.equal(await rule.prune(sweeper, { olderThanSeconds: rule.keepMs / 1000, limit: 500 }), 1);
        await holder.query('ROLLBACK');
        assert.equal(await left(rule, ep), 1, 'the locked row is left for the next tick');
        assert.equal(await rule.prune(sweeper, { olderThanSeconds: rule.keepMs / 1000, limit: 500 }), 1);
      } finally {
        await holder.query('ROLLBACK');
        await sweeper.query('RESET statement_timeout');
        holder.release();
        sweeper.release();
      }
    });
  }
});

/** A queryable that records each statement instead of running it. */
function recorder(): { db: Queryable; seen: Array<{ text: string; values: unknown[] }> } {
  const seen: Array<{ text: string; values: unknown[] }> = [];
  const query = async (text: string, values: unknown[]) => {
    seen.push({ text, values });
    return { rows: [], rowCount: 0 };
  };
  return { db: { query } as unknown as Queryable, seen };
}

test('each retention statement picks its batch through its index, and no step of its plan needs a sequential scan', async () => {
  const indexOf: Array<[Rule['prune'], string]> = [
    [pruneClosedSessions, 'mcp_sessions_closed_idx'],
    [pruneBoardSessions, 'board_sessions_expiry_idx'],
    [pruneSetupTokens, 'setup_tokens_dead_idx'],
    [pruneCliLoginCodes, 'cli_login_codes_expiry_idx'],
    [pruneApiTokens, 'api_tokens_dead_idx'],
    [pruneWebhookDeliveries, 'webhook_deliveries_age_idx'],
    [pruneEvents, 'webhook_events_age_idx'],
    [pruneAdmissionAudit, 'idx_admission_audit_age'],
    [pruneBulkAudit, 'todo_bulk_audit_at'],
    [pruneScheduleAudit, 'schedule_audit_age_idx'],
    [pruneRings, 'idx_rings_sent'],
    [pruneReports, 'idx_doorbell_tests_reported'],
    [pruneOAuthCodes, 'oauth_codes_expires_idx'],
    [pruneOAuthTokens, 'oauth_tokens_expires_idx'],
    [pruneRevokedGrants, 'oauth_grants_revoked_idx'],
    [pruneLapsedGrants, 'oauth_grants_last_used_idx'],
    [pruneUnusedClients, 'oauth_clients_created_idx'],
  ];
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    // Tiny test tables make a sequential scan cheapest; turned off, a statement that could
    // not use an index would still plan one (as a disabled Seq Scan) and show it.
    await client.query('SET LOCAL enable_seqscan = off');
    for (const [prune, index] of indexOf) {
      const r = recorder();
      await prune(r.db, { olderThanSeconds: 86_400, limit: 500 });
      const statement = r.seen[0];
      assert.ok(statement, `${prune.name} ran a statement`);
      const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.text}`, statement.values);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      // The index bounds the scan (an Index Cond), not only its order.
      const bounded = new RegExp(`(Index (Only )?Scan using|Bitmap Index Scan on) ${index} .*\\n\\s*Index Cond:`);
      assert.match(text, bounded, `${prune.name}:\n${text}`);
      assert.doesNotMatch(text, /Seq Scan/, `${prune.name}:\n${text}`);
    }
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});

test('the retention sweeps run through the SweepRunner: of two instances, one runs each tick', async () => {
  const ep = await makeEndpoint(db);
  const hook = await rows.webhook(db, ep.id);
  await rows.delivery(db, ep.id, hook, '-31 days');
  const silent = pino({ level: 'silent' });
  const sweeps = retentionSweeps(db, HOUR, keep);
  const a = new SweepRunner({ db, instanceId: 'a', log: silent, sweeps });
  const b = new SweepRunner({ db, instanceId: 'b', log: silent, sweeps });
  for (const sweep of sweeps) {
    const [first, second] = [await a.tick(sweep), await b.tick(sweep)];
    assert.notEqual(first, null, `${sweep.name}: the first instance runs the tick`);
    assert.equal(second, null, `${sweep.name}: the second finds it claimed`);
    assert.equal(a.stats.get(sweep.name)?.errors, 0, `${sweep.name} ran without error`);
  }
  assert.equal(await rows.count(db, 'webhook_deliveries WHERE endpoint_id = $1', [ep.id]), 0);
});

test('the event history keeps each recently delivered endpoint’s newest N: older events go, other endpoints’ stay', async () => {
  const [busy, quiet] = [await makeEndpoint(db), await makeEndpoint(db)];
  const [busyHook, quietHook] = [await rows.webhook(db, busy.id), await rows.webhook(db, quiet.id)];
  const made: string[] = [];
  for (let i = 5; i >= 1; i--) made.push(await rows.event(db, busy.id, busyHook, `-${i} minutes`));
  for (let i = 5; i >= 1; i--) await rows.event(db, quiet.id, quietHook, `-${i} days`);
  assert.equal(await trimEventCaps(db, 2, HOUR, { batch: 2, maxBatches: 10 }), 3);
  const left = await db.query<{ id: string }>('SELECT id FROM webhook_events WHERE endpoint_id = $1 ORDER BY id', [
    busy.id,
  ]);
  assert.deepEqual(left.rows.map((r) => r.id).sort(), made.slice(-2).sort(), 'the newest two stay');
  assert.equal(
    await rows.count(db, 'webhook_events WHERE endpoint_id = $1', [quiet.id]),
    5,
    'no delivery lately: not read',
  );

  const client = await db.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    const r = recorder();
    await trimEvents(r.db, { endpointId: busy.id, keep: 2, limit: 500 });
    const statement = r.seen[0];
    assert.ok(statement);
    const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.text}`, statement.values);
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    assert.match(text, /Index (Only )?Scan using webhook_events_recent_idx .*\n\s*Index Cond:/, text);
    assert.doesNotMatch(text, /Seq Scan/, text);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});
