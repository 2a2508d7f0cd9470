// The services of one instance for a test, built by the production composition
// (src/services.ts) from a parsed config, and an HTTP app with every surface on it
// (src/main.ts registerSurfaces), driven by inject or listening on a loopback port.
// Nothing is started: no doorbell, pump, heartbeat or sweep runs unless the test calls
// services.start() (startServer in test/helpers/server.ts runs the whole instance).

import assert from 'node:assert/strict';
import { after } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Keyring } from '../../src/secrets/keyring.js';
import { pino, type Logger } from 'pino';
import { parseConfig, type Config } from '../../src/config/index.js';
import { loadMigrations } from '../../src/db/migrate.js';
import type { Pool } from '../../src/db/pool.js';
import type { Bus } from '../../src/domain/events.js';
import { createHost } from '../../src/http/app.js';
import { Readiness } from '../../src/http/readiness.js';
import type { Principal } from '../../src/identity/principal.js';
import { registerSurfaces } from '../../src/main.js';
import { buildServices, type Services } from '../../src/services.js';
import { versionInfo } from '../../src/version.js';

/** A bus that hears nothing: an instance alone on its database, as most HTTP tests are. */
export const QUIET_BUS: Bus = { subscribe: () => () => undefined, onReconnect: () => () => undefined };

export interface ServiceSetup {
  pool: Pool;
  instanceId?: string;
  /** The LISTEN/NOTIFY bus; without one, closes on other instances end no stream here. */
  bus?: Bus;
  /** SWITCHBOARD_* settings for this instance, as `serve` would read them. */
  env?: Record<string, string>;
  /** Adjusts the parsed config (a value no variable can say, e.g. an env capacity). */
  config?: (config: Config) => Config;
  syntheticAdmin?: Principal | null;
  clock?: () => Date;
  log?: Logger;
  /** The signing-secret keyring, as serve loads it (src/secrets/keyring.ts); absent: none. */
  keyring?: Keyring;
}

export async function testServices(o: ServiceSetup): Promise<Services> {
  const parsed = parseConfig({ SWITCHBOARD_PUBLIC_URL: 'http://switchboard.test', ...o.env });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
  return buildServices({
    config: o.config ? o.config(parsed.config) : parsed.config,
    pool: o.pool,
    bus: o.bus ?? QUIET_BUS,
    log: o.log ?? pino({ level: 'silent' }),
    instanceId: o.instanceId ?? 'test-instance',
    version: versionInfo(),
    migrations: await loadMigrations(),
    syntheticAdmin: o.syntheticAdmin ?? null,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.keyring ? { keyring: o.keyring } : {}),
  });
}

/** The HTTP host with every surface on it, as `serve` builds it; not listening. */
export function testApp(services: Services): FastifyInstance {
  const app = createHost({
    log: services.log,
    trustProxy: services.config.trustProxy,
    publicUrl: services.config.publicUrl,
    allowedHosts: services.config.allowedHosts,
    metricsTokenSet: services.config.metricsToken !== null,
    latency: services.metrics.latency,
    connections: services.config.connections,
  });
  registerSurfaces(app, services, new Readiness());
  return app;
}

/** testApp listening on a free loopback port; closed when the file ends. */
export async function listeningApp(services: Services): Promise<{ app: FastifyInstance; url: string }> {
  const app = testApp(services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  after(() => app.close());
  const address = app.server.address();
  assert.ok(address && typeof address === 'object');
  return { app, url: `http://127.0.0.1:${address.port}` };
}
