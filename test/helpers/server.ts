// A real `serve` instance in the test process: startServer on the file's database,
// listening on a free loopback port, stopped when the file ends (before its database is
// dropped: test/helpers/db.ts drops at beforeExit).

import assert from 'node:assert/strict';
import { after } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { startServer, type Server } from '../../src/main.js';

export async function startTestServer(
  databaseUrl: string,
  instanceId: string,
  env: Record<string, string> = {},
): Promise<Server> {
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: databaseUrl,
    SWITCHBOARD_LISTEN: '127.0.0.1:0',
    SWITCHBOARD_INSTANCE_ID: instanceId,
    SWITCHBOARD_DB_POOL_SIZE: '4',
    ...env,
  });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
  const started = await startServer(parsed.config, pino({ level: 'silent' }));
  after(() => started.stop());
  return started;
}
