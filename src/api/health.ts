// /healthz (the process is up), /readyz (the database answers and the schema is current),
// /version. None needs credentials; none reveals anything beyond the build.

import type { FastifyInstance } from 'fastify';
import { ping, type Queryable } from '../db/pool.js';
import { schemaStatus, type Migration } from '../db/migrate.js';
import type { VersionInfo } from '../version.js';

export interface HealthDeps {
  db: Queryable;
  migrations: Migration[];
  version: VersionInfo;
}

export function healthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    try {
      await ping(deps.db);
      const schema = await schemaStatus(deps.db, deps.migrations);
      if (!schema.current) return reply.status(503).send({ status: 'unavailable', reason: schema.reason });
      return { status: 'ready' };
    } catch (err) {
      return reply.status(503).send({ status: 'unavailable', reason: `database: ${(err as Error).message}` });
    }
  });

  app.get('/version', async () => deps.version);
}
