// /healthz (the process is up), /readyz (the database answers and the schema is current),
// /version. None needs credentials; none reveals anything beyond the build.
// /readyz answers 200 {"status":"ready","ready":true,"since":…} or 503 with
// {"status":"unavailable","ready":false,"reason":…,"detail":…,"since":…}; the reasons are
// listed in http/readiness.ts. When the database cannot be reached the detail is only
// "database unavailable"; the error itself is logged at warn.

import type { FastifyInstance } from 'fastify';
import { ping, type Queryable } from '../db/pool.js';
import { schemaStatus, type Migration } from '../db/migrate.js';
import { databaseProblem, problemDetail } from '../db/unavailable.js';
import type { VersionInfo } from '../version.js';
import type { Readiness } from './readiness.js';

export interface HealthDeps {
  pool: Queryable;
  migrations: Migration[];
  version: VersionInfo;
  /** The instance's readiness record, shared with the start sequence. */
  readiness: Readiness;
}

export function healthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  const { readiness } = deps;
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    try {
      await ping(deps.pool);
      const schema = await schemaStatus(deps.pool, deps.migrations);
      if (schema.current) readiness.markReady();
      else readiness.markNotReady(schema.unknown ? 'schema_unknown' : 'migrations_pending', schema.reason);
    } catch (err) {
      const reason = databaseProblem(err) ?? 'database_unreachable';
      request.log.warn({ reason, detail: problemDetail(err) }, 'readiness check: database unavailable');
      readiness.markNotReady(reason);
    }
    const body = readiness.body();
    return reply.status(body.ready ? 200 : 503).send(body);
  });

  app.get('/version', async () => deps.version);
}
