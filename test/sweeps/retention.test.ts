// Pins retention of the tables that only grow: for each rule old dead rows go, young and
// live rows stay, deletion is bounded per statement and per tick, each statement reads
// through an index, and the sweeps run through the SweepRunner's claimed ticks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import type { Queryable } from '../../src/db/pool.js';
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
import { drainPrune, retentionSweeps, type RetentionBounds } from '../../src/sweeps/retention.js';
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

test('the retention settings default to 7 days for sessions, sign-ins and doorbell records and 30 days for the rest', () => {
  assert.deepEqual(keep, {
    mcpSessionsMs: 7 * 86_400_000,
    signInMs: 7 * 86_400_000,
    apiTokensMs: 30 * 86_400_000,
    webhookDeliveriesMs: 30 * 86_400_000,
    doorbellMs: 7 * 86_400_000,
    admissionAuditMs: parsed.config.sweeps.retentionMs,
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

  assert.deepEqual(await sweepNamed('signin_retention').run(), { board_sessions_pruned: 1, setup_tokens_pruned: 2 });
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
  /** The column naming the test's own rows: its endpoint, or the endpoint's human. */
  owner: 'endpoint_id' | 'human_id';
  /** Inserts one row dead for longer than the retention, owned by the endpoint (or its human). */
  old: (ep: { id: string; human_id: string }, hook: string) => Promise<unknown>;
}

/** The rule's rows of this endpoint (or its human) still in the table. */
function left(rule: Rule, ep: { id: string; human_id: string }): Promise<number> {
  return rows.count(db, `${rule.table} WHERE ${rule.owner} = $1`, [rule.owner === 'endpoint_id' ? ep.id : ep.human_id]);
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
    sweep: 'admission_audit_retention',
    count: 'audit_pruned',
    prune: pruneAdmissionAudit,
    keepMs: keep.admissionAuditMs,
    old: (ep) => rows.auditEntry(db, ep.id, ep.human_id, '-31 days'),
    table: 'admission_policy_audit',
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
];

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
        const owner = rule.owner === 'endpoint_id' ? ep.id : ep.human_id;
        await holder.query(`SELECT 1 FROM ${rule.table} WHERE ${rule.owner} = $1 LIMIT 1 FOR UPDATE`, [owner]);
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
    [pruneApiTokens, 'api_tokens_dead_idx'],
    [pruneWebhookDeliveries, 'webhook_deliveries_age_idx'],
    [pruneAdmissionAudit, 'idx_admission_audit_age'],
    [pruneRings, 'idx_rings_sent'],
    [pruneReports, 'idx_doorbell_tests_reported'],
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
