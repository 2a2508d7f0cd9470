// The composition root: listener → database → migrations → services → HTTP → sweeps.
// Every service is built here with explicit dependencies; nothing else wires things up.
// The HTTP listener comes first (api/early.ts): while PostgreSQL cannot be reached the
// start waits and retries (db/wait.ts), /healthz answers 200 and /readyz says why not.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { listenEarly } from './api/early.js';
import { Readiness } from './api/readiness.js';
import { buildHttp } from './api/server.js';
import type { Config } from './config/index.js';
import { NotifyBus } from './db/bus.js';
import { startEmbedded, type EmbeddedPostgres } from './db/embedded.js';
import { loadMigrations, migrate } from './db/migrate.js';
import { createPool, type Pool } from './db/pool.js';
import { retryUnavailable } from './db/wait.js';
import { deadInstanceSweep, InstanceHeartbeat } from './sweeps/instances.js';
import { Doorbell } from './doorbell/pump.js';
import { doorbellAcknowledgement, type Acknowledgement } from './doorbell/acknowledgement.js';
import { HookGuard } from './hooks/guard.js';
import { Metrics } from './metrics/index.js';
import { startHooksAndPresence, type PushServices } from './hooks/wiring.js';
import { collectFromDatabase } from './metrics-reads.js';
import { CapacitySetting } from './messages/capacity.js';
import type { MessageDeps } from './messages/context.js';
import { MessagePump } from './messages/pump.js';
import { messageRedeliverySweep } from './sweeps/messages.js';
import { ensureSetupLink, localAdmin } from './identity/setup.js';
import { admissionReopenSweep, admissionRetentionSweep } from './sweeps/admission.js';
import { reringSweep } from './sweeps/doorbell.js';
import { todoCountsFoldSweep } from './sweeps/counts.js';
import { idleSessionSweep } from './sweeps/sessions.js';
import { endpointExpirySweep } from './sweeps/endpoints.js';
import { SweepRunner } from './sweeps/runner.js';
import { retentionSweeps } from './sweeps/retention.js';
import { reaperSweep, retentionSweep, retryRequeueSweep } from './sweeps/todos.js';
import { versionInfo } from './version.js';

export interface Database {
  url: string;
  /** Where the data lives, for the start line: a data dir or a host. */
  where: string;
  embedded: EmbeddedPostgres | null;
}

export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.database.url) {
    const u = new URL(config.database.url);
    return { url: config.database.url, where: `PostgreSQL at ${u.host}${u.pathname}`, embedded: null };
  }
  const embedded = await startEmbedded({ dataDir: config.database.dataDir, log: (m) => log.info(m) });
  return {
    url: embedded.url,
    where: `embedded PostgreSQL in ${embedded.dataDir} (127.0.0.1:${embedded.port})`,
    embedded,
  };
}

export interface Server {
  app: FastifyInstance;
  pool: Pool;
  doorbell: Doorbell;
  /** Ring records, self-tests and their sweeps (docs/design/doorbell-acknowledgement.md). */
  doorbellAck: Acknowledgement;
  metrics: Metrics;
  messages: MessageDeps;
  pump: MessagePump;
  /** Notify hook delivery and presence of this instance. */
  push: PushServices;
  url: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Aborts a start that is still waiting for the database (a signal during start). */
  signal?: AbortSignal;
  /** Retry delays while the database is unreachable at start; default 0.5 s → 5 s. */
  backoff?: { initialMs: number; maxMs: number };
}

export async function startServer(config: Config, log: Logger, options: StartOptions = {}): Promise<Server> {
  const instanceId = config.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const closers: Array<() => Promise<void>> = [];
  // Idempotent: a second stop() (a test's after() and its own call) waits for the first.
  let closing: Promise<void> | null = null;
  const closeAll = () =>
    (closing ??= (async () => {
      readiness.markNotReady('stopping');
      for (const close of closers.reverse())
        await close().catch((err: unknown) => log.error({ err }, 'shutdown step failed'));
    })());
  const version = versionInfo();
  const readiness = new Readiness();
  const early = await listenEarly({ host: config.listen.host, port: config.listen.port, readiness, version });
  closers.push(() => early.close());
  try {
    const database = await openDatabase(config, log);
    if (database.embedded) closers.push(() => database.embedded!.stop());
    const dbHost = new URL(database.url).host;
    const retry = <T>(step: () => Promise<T>) =>
      retryUnavailable(step, {
        readiness,
        log,
        where: dbHost,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.backoff ? { backoff: options.backoff } : {}),
      });
    const migrations = await loadMigrations();
    readiness.markNotReady('migrations_pending');
    const migrated = await retry(() => migrate(database.url, migrations));
    if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'migrations applied');

    const pool = createPool({ url: database.url, max: config.database.poolSize });
    closers.push(() => pool.end());
    const bus = new NotifyBus({ url: database.url, log: (level, m) => log[level](m) });
    await retry(() => bus.start());
    closers.push(() => bus.stop());

    const identity = { db: pool, publicUrl: config.publicUrl };
    const syntheticAdmin = config.auth ? null : await retry(() => localAdmin(identity));
    const setupUrl = config.auth ? await retry(() => ensureSetupLink(identity)) : null;

    const hookGuard = new HookGuard(config.hooks);
    const metrics = new Metrics();
    collectFromDatabase(metrics, pool);
    // The queue capacity is resolved (env > persisted > default) before the first admission.
    for (const warning of config.messages.warnings) log.warn(warning);
    const capacity = new CapacitySetting({ db: pool, envCapacity: config.messages.envCapacity, log });
    await retry(() => capacity.load());
    const unlistenCapacity = capacity.listen(bus);
    closers.push(async () => unlistenCapacity());
    const messages: MessageDeps = { db: pool, capacity, metrics };
    const app = buildHttp({
      db: pool,
      pool,
      migrations,
      version,
      metrics,
      metricsToken: config.metricsToken,
      log,
      publicUrl: config.publicUrl,
      defaultLeaseSeconds: config.todos.defaultLeaseSeconds,
      syntheticAdmin,
      trustProxy: config.trustProxy,
      retentionMs: config.sweeps.retentionMs,
      instanceId,
      bus,
      onStreamOpen: (endpointId, sessionId) => {
        void doorbell.attached(endpointId, sessionId);
        void pump.attached({ endpointId, sessionId });
      },
      onStreamClose: (endpointId, sessionId) => void pump.detached({ endpointId, sessionId }),
      messages,
      hookGuard,
      readiness,
      serverFactory: early.factory,
    });
    // The doorbell writes to the streams this app's MCP sessions hold.
    const doorbellAck = doorbellAcknowledgement({
      db: pool,
      log,
      metrics: metrics.doorbell,
      bus,
      ackWindowMs: config.doorbell.ackWindowMs,
      send: (ring, params, instance) => doorbell.send(ring, params, instance),
    });
    closers.push(() => doorbellAck.stop());
    const doorbell = new Doorbell({
      db: pool,
      instanceId,
      log,
      writer: app.mcpSessions,
      recorder: doorbellAck.recorder,
    });
    const unlisten = doorbell.listen(bus);
    closers.push(async () => unlisten());
    const pump = new MessagePump({ messages, instanceId, log, writer: app.mcpSessions });
    const unlistenPump = pump.listen(bus);
    // Runs after app.close(): the streams it ended return their in-flight messages first.
    closers.push(async () => {
      unlistenPump();
      await pump.settle();
    });
    const push = startHooksAndPresence({
      db: pool,
      log,
      bus,
      doorbell,
      guard: hookGuard,
      metrics,
      version: version.version,
    });
    closers.push(() => push.stop());

    // Liveness: this instance's row, beaten on its own timer; the sweep below finds dead ones.
    const heartbeat = new InstanceHeartbeat({
      db: pool,
      info: { id: instanceId, host: hostname(), pid: process.pid, version: version.version },
      intervalMs: config.instances.heartbeatMs,
      log,
      onRevived: () => app.mcpSessions.reopenStreams(),
    });
    const redelivery = {
      messages,
      ring: (endpointId: string, queue: string) => doorbell.ready(endpointId, queue),
      ringMarginMs: config.instances.heartbeatMs,
    };

    const sweeps = new SweepRunner({
      db: pool,
      instanceId,
      log,
      sweeps: [
        reaperSweep(pool, config.sweeps.reaperIntervalMs, metrics),
        retryRequeueSweep(pool, config.sweeps.reaperIntervalMs),
        retentionSweep(pool, config.sweeps.retentionIntervalMs, config.sweeps.retentionMs),
        endpointExpirySweep(pool, config.sweeps.reaperIntervalMs),
        reringSweep(doorbell),
        todoCountsFoldSweep(pool),
        idleSessionSweep(pool),
        admissionReopenSweep(pool),
        admissionRetentionSweep(pool, config.sweeps.retentionIntervalMs),
        ...retentionSweeps(pool, config.sweeps.retentionIntervalMs, config.retention),
        ...doorbellAck.sweeps,
        messageRedeliverySweep(messages, config.messages.ackTimeoutMs),
        ...push.sweeps,
        deadInstanceSweep(pool, {
          intervalMs: config.instances.heartbeatMs,
          deadAfterMs: config.instances.deadAfterMs,
          redelivery,
          log,
          heartbeat,
          instanceId,
        }),
      ],
    });
    await retry(() => heartbeat.start(redelivery));
    // Runs after app.close() has marked this instance's streams closed.
    closers.push(() => heartbeat.stop());
    // The app takes over the listener that answered while the start waited.
    early.releaseUpgrades();
    await app.ready();
    early.attach();
    closers.push(async () => {
      await app.close();
      await early.close();
    });
    readiness.markReady();
    sweeps.start();
    closers.push(() => sweeps.stop());

    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.listen.port;
    const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
    const url = `http://${host}:${port}`;
    log.info(
      { version: version.version, instance: instanceId, url, data: database.where },
      `switchboard ${version.version} listening on ${url} — API ${url}/api/v1, board ${url}/, ` +
        `health ${url}/healthz, readiness ${url}/readyz, version ${url}/version; data: ${database.where}`,
    );
    if (setupUrl) {
      log.info({ setup_url: setupUrl }, `no humans yet: open ${setupUrl} within 1 hour to create the first admin`);
    }
    if (syntheticAdmin) log.warn('SWITCHBOARD_AUTH=off: every request is treated as an admin (loopback only)');
    return { app, pool, doorbell, doorbellAck, metrics, messages, pump, push, url, stop: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
