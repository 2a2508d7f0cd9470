// The failover scenario of the reliability suite (issue 38): Switchboard on a
// pg_auto_failover formation (chaos/autofailover.ts: a monitor, a primary and a
// synchronous standby), two `serve` instances on the multi-host URL
// (target_session_attrs=read-write), 16 MCP workers draining todos (chaos/todos.ts) and
// producers creating todos with idempotency keys, while the primary changes twice: a
// planned `pg_autoctl perform switchover`, then an unplanned failover (kill -9 of the
// primary's postmaster and its pg_autoctl). Run by chaos/run.ts after the main scenario
// (`npm run test:chaos:short` included), or alone with `--failover-only`; skipped, saying
// why, where pg_autoctl or PostgreSQL 15 is missing.
//
// Verdict: every answered create exists, once; every todo is done with exactly one
// completed attempt, the one a worker was answered OK for (chaos/todos.ts checkTodos,
// budgets included); no serve crashed and nothing answered 5xx but 503 `unavailable`;
// after each fault both instances answer /readyz 200 within READY_POLLS polls, and through
// it each answered 503 while no writable primary answered and 200 then at most
// READY_200_IN_GAP polls; after each fault and at the end, every complete answered OK is
// done and every answered claim is held or ended under its lease token
// (chaos/acknowledged.ts). Reported: time without a writable primary and time until claims
// flow again, per fault.
//
// Knobs: CHAOS_FAILOVER_TODOS (short 600, long 4,000), CHAOS_FAILOVER_PUSHES (short 200,
// long 1,000), CHAOS_WORKERS (16 here), CHAOS_KEEP=1 keeps the formation's dir and logs.

import { createServer } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { Hosts, connectClient } from '../src/db/connect.js';
import { createPool } from '../src/db/pool.js';
import { migrate } from '../src/db/migrate.js';
import { newId } from '../src/domain/ids.js';
import { vendEndpoint } from '../src/endpoints/manage.js';
import { insertHuman } from '../src/store/humans.js';
import { ChaosClient, newTally, type Tally } from './client.js';
import { ReadyWatch, checkAcknowledged, type ClaimLog } from './acknowledged.js';
import { Formation, failoverUnavailable } from './autofailover.js';
import { Instance } from './cluster.js';
import {
  checkTodos,
  meteredSpent,
  newStats,
  planTodos,
  remaining,
  runWorker,
  seedTodos,
  type CompleteLog,
} from './todos.js';
import type { Violation } from './todos.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** /readyz polls (200 ms apart) an instance gets to answer 200 after a fault. */
const READY_POLLS = 300;
/** Attempts one create gets (same idempotency key) before it counts as never answered. */
const CREATE_TRIES = 400;

async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer().listen(0, '127.0.0.1'));
  await Promise.all(servers.map((s) => once(s, 'listening')));
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

interface Pushed {
  key: string;
  id: string;
}

/** Creates `count` todos, each retried with its idempotency key until answered. */
async function runProducer(
  index: number,
  o: { urls: () => string[]; credential: string; tally: Tally; pushed: Pushed[]; unanswered: string[]; count: number },
): Promise<void> {
  const c = new ChaosClient({
    urls: o.urls,
    credential: o.credential,
    name: `failover-producer-${index}`,
    tally: o.tally,
    renewSession: true,
  });
  if (!(await c.open(() => false))) return;
  try {
    for (let seq = 0; seq < o.count; seq++) {
      const key = `push-${index}-${seq}`;
      let answered = false;
      for (let tries = 0; tries < CREATE_TRIES && !answered; tries++) {
        const r = await c.call('create_todo', { queue: 'inbox', title: `pushed ${key}`, idempotency_key: key });
        if (r.kind === 'ok') {
          o.pushed.push({ key, id: (r.value.todo as { id: string }).id });
          answered = true;
        } else {
          await sleep(50 + Math.random() * 100);
        }
      }
      if (!answered) o.unanswered.push(key);
      await sleep(20 + Math.random() * 60);
    }
  } finally {
    c.close();
  }
}

/** Writable-primary probe: a fresh read-write connection every 100 ms; the gaps it saw. */
class Probe {
  private stopped = false;
  private readonly hosts: Hosts;
  readonly timeline: Array<{ at: number; ok: boolean }> = [];
  private loop: Promise<void> = Promise.resolve();

  constructor(url: string) {
    this.hosts = Hosts.fromUrl(url, 500);
  }

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        const at = Date.now();
        const ok = await connectClient(this.hosts, { application_name: 'chaos-probe' }).then(
          async (c) => {
            await c.end().catch(() => undefined);
            return true;
          },
          () => false,
        );
        this.timeline.push({ at, ok });
        await sleep(100);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /**
   * From `since`: ms from the first failed probe to the next good one (0 if none failed),
   * when the gap began (null if none) and when a writable primary came back.
   */
  gap(since: number): { downMs: number; downAt: number | null; backAt: number | null } {
    const after = this.timeline.filter((p) => p.at >= since);
    const firstBad = after.find((p) => !p.ok);
    if (!firstBad) return { downMs: 0, downAt: null, backAt: after.find((p) => p.ok)?.at ?? null };
    const back = after.find((p) => p.ok && p.at > firstBad.at);
    return { downMs: back ? back.at - firstBad.at : -1, downAt: firstBad.at, backAt: back?.at ?? null };
  }
}

export async function runFailover(o: {
  short: boolean;
  say: (line: string) => void;
  keep: boolean;
  /** Registers what an interrupt must stop: the formation's processes live in groups of their own. */
  onInterrupt?: (step: () => Promise<void>) => void;
}): Promise<{ code: number; summary: string[] }> {
  const { say } = o;
  const unavailable = failoverUnavailable();
  if (unavailable) {
    say(`failover scenario skipped: ${unavailable}`);
    return { code: 0, summary: [`failover scenario skipped: ${unavailable}`] };
  }
  const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  const TODOS = num('CHAOS_FAILOVER_TODOS', o.short ? 600 : 4_000);
  const PUSHES = num('CHAOS_FAILOVER_PUSHES', o.short ? 200 : 1_000);
  const WORKERS = num('CHAOS_WORKERS', 16);
  const PRODUCERS = 4;
  const started = Date.now();
  const [monitorPort, node1, node2, ...servePorts] = await freePorts(5);
  const formation = await Formation.create([monitorPort!, node1!, node2!], say, o.onInterrupt);
  const violations: Violation[] = [];
  const facts: string[] = [];
  const instances: Instance[] = [];
  try {
    const url = formation.url;
    const sync = await formation.replication(node1!);
    facts.push(
      `replication before the faults: synchronous_standby_names '${sync.standbyNames}', synchronous_commit ${sync.commit}, ${sync.syncStandbys} synchronous standby`,
    );
    if (sync.standbyNames === '' || sync.syncStandbys < 1) {
      violations.push({ check: 'synchronous replication is on', detail: JSON.stringify(sync) });
    }
    await migrate(url);
    const pool = createPool({ url, max: 4, applicationName: 'chaos-suite', connectTimeoutMs: 1_000 });
    pool.on('error', () => undefined);
    const human = await insertHuman(pool, {
      id: newId('hu'),
      email: 'failover@example.test',
      displayName: 'failover',
      role: 'admin',
    });
    const workers = await vendEndpoint(
      { db: pool, publicUrl: 'http://chaos.test' },
      human.id,
      { name: 'failover-workers', queues: ['inbox', 'capped', 'metered'] },
      new Date(),
    );
    const plan = planTodos(TODOS);
    await seedTodos(pool, workers.endpoint.id, human.id, plan);
    const env = {
      SWITCHBOARD_DB_POOL_SIZE: '8',
      SWITCHBOARD_DEFAULT_LEASE: '10s',
      SWITCHBOARD_REAPER_INTERVAL: '2s',
      SWITCHBOARD_DB_CONNECT_TIMEOUT: '1s',
      SWITCHBOARD_DATA_DIR: join(formation.dir, 'serve-data'),
    };
    for (const [i, port] of servePorts.entries()) {
      instances.push(new Instance(`failover-serve-${'ab'[i]}`, port, () => url, env, formation.dir));
    }
    for (const i of instances) await i.start();
    say(`serve instances ready on ${url.replace(/\?.*/, '')}: ${instances.map((i) => i.url).join(', ')}`);

    const urls = () => instances.map((i) => i.url);
    const tally = newTally();
    const log: CompleteLog[] = [];
    const claims: ClaimLog[] = [];
    const stats = newStats();
    const pushed: Pushed[] = [];
    const unanswered: string[] = [];
    let stop = false;
    const running = Array.from({ length: WORKERS }, (_, i) =>
      runWorker(i, {
        urls,
        credential: workers.credential,
        tally,
        stop: () => stop,
        leaseSeconds: 10,
        workMs: 150,
        log,
        claims,
        stats,
        holdStream: i % 4 === 0,
      }),
    );
    const perProducer = Math.ceil(PUSHES / PRODUCERS);
    const producing = Array.from({ length: PRODUCERS }, (_, i) =>
      runProducer(i, {
        urls,
        credential: workers.credential,
        tally,
        pushed,
        unanswered,
        count: Math.min(perProducer, PUSHES - i * perProducer),
      }),
    );
    const probe = new Probe(url);
    probe.start();
    // When each claim count was first seen (every 100 ms): when claims flowed again.
    const claimTimes: Array<{ at: number; claims: number }> = [];
    const sampler = setInterval(() => claimTimes.push({ at: Date.now(), claims: stats.claims }), 100);
    const finishable = plan.total - plan.metered + PUSHES;
    // Read on the new primary; the suite's pool may meet the old one's dead connections first.
    const acknowledged = async (when: string): Promise<Violation[]> => {
      for (let tries = 0; ; tries++) {
        try {
          return await checkAcknowledged(pool, workers.endpoint.id, [...log], [...claims], when);
        } catch (err) {
          if (tries >= 40) throw err;
          await sleep(250);
        }
      }
    };
    const progress = async () => (await remaining(pool, workers.endpoint.id).catch(() => ({ done: 0 }))).done;

    const faults: Array<{ name: string; run: () => Promise<string> }> = [
      {
        name: 'switchover',
        run: async () => {
          await formation.switchover();
          return 'pg_autoctl perform switchover';
        },
      },
      {
        name: 'kill -9 of the primary',
        run: async () => {
          const { node, pid } = await formation.killPrimary();
          return `kill -9 of ${node}'s postmaster (pid ${pid}) and its pg_autoctl`;
        },
      },
    ];
    const thresholds = [0.25, 0.55];
    for (const [n, fault] of faults.entries()) {
      for (let polls = 0; (await progress()) < finishable * thresholds[n]!; polls++) {
        if (polls > 2_000) throw new Error(`the workload did not reach ${thresholds[n]} before the ${fault.name}`);
        await sleep(250);
      }
      const before = await formation.primary();
      const claimsBefore = stats.claims;
      const t0 = Date.now();
      const watch = new ReadyWatch(instances);
      const what = await fault.run();
      const faultMs = Date.now() - t0;
      say(`fault: ${what} (primary was ${before})`);
      // Both instances ready again, within bounded polls.
      for (const i of instances) {
        let ready = false;
        for (let polls = 0; polls < READY_POLLS && !ready; polls++) {
          ready = await fetch(`${i.url}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          );
          if (!ready) await sleep(200);
        }
        if (!ready)
          violations.push({ check: `${i.name} ready after the ${fault.name}`, detail: `${READY_POLLS} polls` });
      }
      // Claims flowing again: the first claim answered after the writable primary came back.
      let gap = probe.gap(t0);
      for (let polls = 0; gap.backAt === null && polls < READY_POLLS; polls++) {
        await sleep(200);
        gap = probe.gap(t0);
      }
      // The first claim answered after the probe found a writable primary again.
      const from = Math.max(gap.backAt ?? t0, t0);
      const base = [...claimTimes].reverse().find((c) => c.at <= from)?.claims ?? stats.claims;
      let flowedAt: number | null = null;
      for (let polls = 0; polls < READY_POLLS && flowedAt === null; polls++) {
        flowedAt = claimTimes.find((c) => c.at > from && c.claims > base)?.at ?? null;
        if (flowedAt === null) await sleep(200);
      }
      const after = await formation.primary().catch(() => null);
      facts.push(
        `${fault.name}: primary ${before} → ${after}; no writable primary for ${gap.downMs} ms; ` +
          `claims flowing again ${flowedAt === null ? 'never' : `${flowedAt - from} ms`} after that ` +
          `(the fault's command took ${faultMs} ms; ${base - claimsBefore} claims were answered meanwhile)`,
      );
      say(facts[facts.length - 1]!);
      await watch.stop();
      const ready = watch.judge(
        instances.map((i) => i.name),
        gap.downAt !== null && gap.backAt !== null ? { from: gap.downAt, to: gap.backAt } : null,
        fault.name,
      );
      violations.push(...ready.violations);
      facts.push(ready.fact);
      say(ready.fact);
      violations.push(...(await acknowledged(`after the ${fault.name}`)));
      if (flowedAt === null) violations.push({ check: `claims flow after the ${fault.name}`, detail: 'none seen' });
      if (after === before || after === null) {
        // The monitor may still be settling: ask again a few times before calling it a failure.
        let now = after;
        for (let polls = 0; polls < READY_POLLS && (now === before || now === null); polls++) {
          await sleep(200);
          now = await formation.primary().catch(() => null);
        }
        if (now === before || now === null) {
          violations.push({ check: `the ${fault.name} moved the primary`, detail: `${before} → ${now}` });
        }
      }
      if (n === 0) {
        await formation.untilSettled('the formation to settle after the switchover');
        const p = (await formation.primary()) === 'node1' ? node1! : node2!;
        const s = await formation.replication(p);
        if (s.standbyNames === '') violations.push({ check: 'synchronous again after the switchover', detail: '' });
      }
    }
    await Promise.all(producing);
    const total = plan.total + pushed.length;
    // Done as in chaos/run.ts: nothing open but metered's rest, held by its spent window.
    for (let polls = 0; ; polls++) {
      const left = await remaining(pool, workers.endpoint.id).catch(() => ({ open: -1, done: 0 }));
      if (left.open === 0 && (await meteredSpent(pool, workers.endpoint.id, plan).catch(() => false))) break;
      if (polls > 2_400) {
        violations.push({ check: 'the work finished', detail: `${left.open} todos open` });
        break;
      }
      await sleep(250);
    }
    stop = true;
    await Promise.all(running);
    await probe.stop();
    clearInterval(sampler);

    const t = await checkTodos(pool, workers.endpoint.id, { ...plan, total }, log);
    violations.push(...t.violations);
    violations.push(...(await acknowledged('at the end')));
    facts.push(...t.facts);
    if (unanswered.length > 0) {
      violations.push({
        check: `every create answered within ${CREATE_TRIES} tries`,
        detail: unanswered.slice(0, 5).join(', '),
      });
    }
    const stored = await pool.query<{ key: string; id: string; n: number }>(
      `SELECT idempotency_key AS key, min(id) AS id, count(*)::int AS n FROM todos
        WHERE endpoint_id = $1 AND idempotency_key LIKE 'push-%' GROUP BY 1`,
      [workers.endpoint.id],
    );
    const byKey = new Map(stored.rows.map((r) => [r.key, r]));
    const lost = pushed.filter((p) => byKey.get(p.key)?.id !== p.id);
    if (lost.length > 0) {
      violations.push({
        check: 'every answered create exists, under its id',
        detail: JSON.stringify(lost.slice(0, 5)),
      });
    }
    const twice = stored.rows.filter((r) => r.n > 1);
    if (twice.length > 0) {
      violations.push({ check: 'every create exists once', detail: JSON.stringify(twice.slice(0, 5)) });
    }
    facts.push(`creates: ${pushed.length} answered of ${PUSHES}, ${stored.rows.length} stored`);
    const crashes = instances.flatMap((i) => i.crashes);
    if (crashes.length > 0) violations.push({ check: 'no serve instance crashed', detail: crashes.join('; ') });
    if (tally.unexpected > 0) {
      violations.push({
        check: 'no 5xx but 503 unavailable, no internal tool error',
        detail: tally.samples.slice(0, 5).join(' | '),
      });
    }
    facts.push(
      `calls ${tally.calls}, lost ${tally.lost}, rate limited ${tally.rateLimited}; 5xx: ${[...tally.http5xx].map(([k, v]) => `${k} ×${v}`).join(', ') || 'none'}; ` +
        `tool errors: ${[...tally.toolErrors].map(([k, v]) => `${k} ×${v}`).join(', ') || 'none'}`,
      `workers: ${stats.claims} claims (${claims.length} checked held or ended under their lease token), ` +
        `${stats.completes} completes OK (each checked done after each fault and at the end), ${stats.conflicts} conflicts`,
    );
    await pool.end();
    facts.unshift(`run: ${((Date.now() - started) / 1000).toFixed(0)} s, ${WORKERS} workers, 2 serve instances`);
  } finally {
    for (const i of instances) await i.stop().catch(() => undefined);
    for (const i of instances) i.closeLog();
    await formation.writeNote(
      'summary.txt',
      [...facts, ...violations.map((v) => `✗ ${v.check}: ${v.detail}`)].join('\n'),
    );
    if (o.keep) say(`kept ${formation.dir}`);
    await formation.stop(o.keep);
  }
  const summary = [
    ...facts,
    violations.length === 0 ? 'PASS: every failover invariant held' : `FAIL: ${violations.length} violated`,
    ...violations.map((v) => `✗ ${v.check}: ${v.detail}`),
  ];
  return { code: violations.length === 0 ? 0 : 1, summary };
}
