// The composition root: config → listener → database → migrations → services → HTTP host
// → surfaces → sweeps, in that order (docs/architecture.md). The services are built in
// one place (src/services.ts); this file starts them and serves them, and nothing else
// wires things up. The HTTP listener comes first (http/early.ts): while PostgreSQL cannot
// be reached the start waits and retries (db/wait.ts), /healthz answers 200 and /readyz
// says why not.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { apiRoutes } from './api/routes.js';
import { boardRoutes } from './board/index.js';
import { startWarnings, type Config } from './config/index.js';
import { NotifyBus } from './db/bus.js';
import { startEmbedded, type EmbeddedPostgres } from './db/embedded.js';
import { loadKeyring } from './secrets/keyring.js';
import { checkAndReseal } from './secrets/reseal.js';
import { loadMigrations, migrate, type MigrateResult } from './db/migrate.js';
import { namedShareOf } from './db/generic-share.js';
import { createPool } from './db/pool.js';
import { parseDatabaseUrl } from './domain/database-url.js';
import { retryUnavailable } from './db/wait.js';
import { createHost, operatorRoutes } from './http/app.js';
import { createAuth } from './http/auth.js';
import { listenEarly } from './http/early.js';
import { collectRoutes, openApiRoute } from './http/openapi.js';
import { Readiness } from './http/readiness.js';
import { ensureSetupLink, localAdmin } from './identity/setup.js';
import { mcpRoutes } from './mcp/server.js';
import { buildServices, type Services } from './services.js';
import { SweepRunner } from './sweeps/runner.js';
import { createTracing, type TracingOverride } from './tracing/index.js';
import { versionInfo } from './version.js';

export interface Database {
  url: string;
  /** Where the LISTEN connection and migrations connect: a session of their own (the main URL unless set). */
  busUrl: string;
  /** Where the data lives, for the start line: a data dir or a host. */
  where: string;
  embedded: EmbeddedPostgres | null;
}

export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.database.url) {
    const parsed = parseDatabaseUrl(config.database.url);
    const where = parsed.ok ? parsed.target.where : 'the configured database';
    const busUrl = config.database.busUrl ?? config.database.url;
    return { url: config.database.url, busUrl, where: `PostgreSQL at ${where}`, embedded: null };
  }
  const embedded = await startEmbedded({ dataDir: config.database.dataDir, log: (m) => log.info(m) });
  return {
    url: embedded.url,
    busUrl: embedded.url,
    where: `embedded PostgreSQL in ${embedded.dataDir} (127.0.0.1:${embedded.port})`,
    embedded,
  };
}

/** `switchboard migrate`: applies pending migrations to the configured database and stops. */
export async function migrateDatabase(config: Config, log: Logger): Promise<MigrateResult> {
  const database = await openDatabase(config, log);
  try {
    return await migrate(database.busUrl, undefined, { connectTimeoutMs: config.database.connectTimeoutMs });
  } finally {
    await database.embedded?.stop();
  }
}

/** The services, the Fastify app serving them and its URL. */
export interface Server extends Services {
  app: FastifyInstance;
  url: string;
  /** The first-run setup link when there are no humans yet: a secret, never logged. */
  setupUrl: string | null;
  stop(): Promise<void>;
}

/** The surfaces on the host, in the order their routes were registered before. */
export function registerSurfaces(app: FastifyInstance, services: Services, readiness: Readiness): void {
  const auth = createAuth({
    ...services.identity,
    syntheticAdmin: services.syntheticAdmin,
    nowMs: () => services.clock().getTime(),
    limits: services.config.api,
    allowedOrigins: services.config.allowedOrigins,
  });
  const { pool, migrations, version, metrics } = services;
  // Before any route, so the OpenAPI document sees them all (docs/design/api-contract.md).
  const declared = collectRoutes(app);
  operatorRoutes(app, { pool, migrations, version, readiness, metrics, metricsToken: services.config.metricsToken });
  apiRoutes(app, services, auth);
  openApiRoute(app, declared, version.version);
  boardRoutes(app, services, auth);
  mcpRoutes(app, services);
}

export interface StartOptions {
  /** Aborts a start that is still waiting for the database (a signal during start). */
  signal?: AbortSignal;
  /** Retry delays while the database is unreachable at start; default 0.5 s → 5 s. */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * Tests: export this instance's spans to the given exporter (an InMemorySpanExporter),
   * one by one as they end, whatever the OTEL_* settings say.
   */
  tracing?: TracingOverride;
}

export async function startServer(config: Config, log: Logger, options: StartOptions = {}): Promise<Server> {
  const instanceId = config.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  // What stop() closes, last started first, each with the name the "stopped" line gives it.
  const closers: Array<[string, () => Promise<void>]> = [];
  const readiness = new Readiness();
  // Idempotent: a second stop() (a test's after() and its own call) waits for the first.
  let closing: Promise<void> | null = null;
  const closeAll = () =>
    (closing ??= (async () => {
      readiness.markNotReady('stopping');
      const started = Date.now();
      const stopped: string[] = [];
      for (const [name, close] of closers.reverse()) {
        await close().then(
          () => stopped.push(name),
          (err: unknown) => log.error({ err, step: name }, `shutdown step failed: ${name}`),
        );
      }
      const ms = Date.now() - started;
      log.info({ stopped, ms }, `stopped: ${stopped.join(', ')} (${(ms / 1000).toFixed(1)} s)`);
    })());
  const version = versionInfo();
  const early = await listenEarly({
    host: config.listen.host,
    port: config.listen.port,
    readiness,
    version,
    connections: config.connections,
  });
  closers.push(['listener', () => early.close()]);
  try {
    // Traces first, so that everything after can be traced; shut down (flushed) last.
    const tracing = await createTracing({
      config: config.tracing,
      instanceId,
      version: version.version,
      ...(options.tracing ? { override: options.tracing } : {}),
    });
    closers.push(['tracing', () => tracing.shutdown()]);
    // The database: embedded or external, migrated, pooled, and its LISTEN connection.
    const database = await openDatabase(config, log);
    if (database.embedded) closers.push(['embedded PostgreSQL', () => database.embedded!.stop()]);
    const parsedUrl = parseDatabaseUrl(database.url);
    const dbHost = parsedUrl.ok ? parsedUrl.target.servers : 'the database';
    const retry = <T>(step: () => Promise<T>) =>
      retryUnavailable(step, {
        notReady: (problem, detail) => readiness.markNotReady(problem, detail),
        log,
        where: dbHost,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.backoff ? { backoff: options.backoff } : {}),
      });
    const migrations = await loadMigrations();
    readiness.markNotReady('migrations_pending');
    // Migrations hold an advisory lock across statements: over the bus's session URL.
    const connectTimeoutMs = config.database.connectTimeoutMs;
    const migrated = await retry(() => migrate(database.busUrl, migrations, { connectTimeoutMs }));
    if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'migrations applied');
    const pool = createPool({
      url: database.url,
      max: config.database.poolSize,
      namedShare: namedShareOf(config.database.poolSize),
      statementTimeoutMs: config.database.statementTimeoutMs,
      idleInTransactionTimeoutMs: config.database.idleInTransactionTimeoutMs,
      lockTimeoutMs: config.database.lockTimeoutMs,
      connectTimeoutMs,
      transactionPooler: config.database.transactionPooler,
      queries: tracing.queries,
    });
    closers.push(['database pool', () => pool.end()]);
    const bus = new NotifyBus({ url: database.busUrl, connectTimeoutMs, log: (level, m) => log[level](m) });
    await retry(() => bus.start());
    closers.push(['LISTEN connection', () => bus.stop()]);

    // The services, then what they need from the database before the first request.
    const identity = { db: pool, publicUrl: config.publicUrl };
    const syntheticAdmin = config.auth ? null : await retry(() => localAdmin(identity));
    const setupUrl = config.auth ? await retry(() => ensureSetupLink(identity)) : null;
    // Signing secrets at rest (docs/design/intake.md): a stored secret this server cannot
    // open stops the start here, before any delivery could fail to verify or go unsigned.
    const keyring = await loadKeyring({
      ...config.secrets,
      dataDir: config.database.dataDir,
      embedded: database.embedded !== null,
    });
    if (!keyring.current) {
      log.warn(
        'no SWITCHBOARD_SECRET_KEY: webhook and notify-hook signing secrets are stored as issued (docs/design/intake.md, "Secrets at rest")',
      );
    }
    const { resealed } = await retry(() => checkAndReseal(pool, keyring));
    if (resealed > 0) log.info({ resealed }, 'signing secrets sealed under the current key');
    const services = buildServices({
      keyring,
      config,
      pool,
      bus,
      log,
      instanceId,
      version,
      migrations,
      syntheticAdmin,
      tracing,
    });
    // The queue capacity is resolved (env > persisted > default) before the first admission.
    for (const warning of config.messages.warnings) log.warn(warning);
    await retry(() => services.messages.capacity.load());
    services.start();
    // Runs after app.close(): the streams it ended return their in-flight messages first.
    closers.push(['services (streams, timers)', () => services.stop()]);
    await retry(() => services.heartbeat.start(services.redelivery));

    // The HTTP host and the surfaces on it; it takes over the listener that answered
    // while the start waited.
    const app = createHost({
      log,
      trustProxy: config.trustProxy,
      serverFactory: early.factory,
      publicUrl: config.publicUrl,
      allowedHosts: config.allowedHosts,
      metricsTokenSet: config.metricsToken !== null,
      latency: services.metrics.latency,
      tracing,
      connections: config.connections,
    });
    registerSurfaces(app, services, readiness);
    early.releaseUpgrades();
    await app.ready();
    early.attach();
    closers.push([
      'HTTP server',
      async () => {
        await app.close();
        await early.close();
      },
    ]);
    readiness.markReady();

    // The sweeps last: they find work only a serving instance should touch.
    const sweeps = new SweepRunner({
      db: pool,
      instanceId,
      log,
      sweeps: services.sweeps,
      metrics: services.metrics.health.sweeps,
      tracing,
    });
    sweeps.start();
    closers.push(['sweeps', () => sweeps.stop()]);

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
      log.info('no humans yet: a one-time setup link (valid 1 hour) was printed to stderr');
    }
    if (syntheticAdmin) log.warn('SWITCHBOARD_AUTH=off: every request is treated as an admin (loopback only)');
    for (const warning of startWarnings(config)) log.warn(warning);
    return { ...services, app, url, setupUrl, stop: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
