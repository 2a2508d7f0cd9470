// Pins notify hooks through the real wiring: two servers configured by environment (http
// and loopback allowed), a todo created on one, the todo_ready notice heard by both, and
// exactly one signed delivery; held while out, and a backlog on clock-in.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { createHook } from '../../src/hooks/manage.js';
import { HookGuard } from '../../src/hooks/guard.js';
import { startServer, type Server } from '../../src/main.js';
import { clockIn, clockOut } from '../../src/presence/manage.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';
import { verifies, type Received } from './receiver.js';
import { until } from '../helpers/wait.js';

const { pool, url } = await testDatabase('hooks_servers');
const ENV = { SWITCHBOARD_PUSH_ALLOW_HTTP: 'on', SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: '127.0.0.0/8' };

async function server(name: string): Promise<Server> {
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: url,
    SWITCHBOARD_LISTEN: '127.0.0.1:0',
    SWITCHBOARD_INSTANCE_ID: name,
    SWITCHBOARD_DB_POOL_SIZE: '4',
    ...ENV,
  });
  assert.ok(parsed.ok);
  const started = await startServer(parsed.config, pino({ level: 'silent' }));
  after(() => started.stop());
  return started;
}

const received: Received[] = [];
const http = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    received.push({ path: req.url ?? '', headers, body, json: JSON.parse(body) as Record<string, unknown> });
    res.statusCode = 200;
    res.end();
  });
});
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => http.close(() => resolve())));
const address = http.address();
const port = typeof address === 'object' && address ? address.port : 0;

const a = await server('hooks-a');
const b = await server('hooks-b');
const guard = new HookGuard({ allowHttp: true, allowCidrs: ['127.0.0.0/8'] });

const settle = () => new Promise((r) => setTimeout(r, 400));
const at = (path: string) => received.filter((r) => r.path === path);

test('a todo created with two servers listening is delivered once, signed', async () => {
  const v = await vend(pool);
  const hook = await createHook(
    { db: pool, guard },
    { id: v.endpoint.id, queues: ['inbox'] },
    {
      url: `http://127.0.0.1:${port}/both`,
    },
  );
  for (let i = 0; i < 5; i++) {
    await createTodo(
      { db: pool, defaultLeaseSeconds: 300 },
      { endpointId: v.endpoint.id },
      { humanId: v.humanId },
      {
        queue: 'inbox',
        title: `job ${i}`,
      },
    );
  }
  await until(() => at('/both').length >= 5, 'five deliveries');
  await Promise.all([a.push.delivery.idle(), b.push.delivery.idle()]);
  await settle();
  const got = at('/both');
  assert.equal(got.length, 5);
  assert.equal(new Set(got.map((r) => r.json.todo_id)).size, 5);
  assert.ok(got.every((r) => verifies(r, hook.signing_secret)));
  assert.match(got[0]?.headers['user-agent'] ?? '', /^switchboard\//);
});

test('while out only the presence-ignoring hook hears; clocking in sends one backlog', async () => {
  const v = await vend(pool);
  const owner = { id: v.endpoint.id, queues: ['inbox'] };
  await createHook({ db: pool, guard }, owner, { url: `http://127.0.0.1:${port}/held` });
  await createHook({ db: pool, guard }, owner, { url: `http://127.0.0.1:${port}/always`, ignore_presence: true });
  await clockOut({ db: pool }, v.endpoint.id, {});
  await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: v.endpoint.id },
    { humanId: v.humanId },
    {
      queue: 'inbox',
      title: 'after hours',
    },
  );
  await until(() => at('/always').length === 1, 'the presence-ignoring hook');
  await settle();
  assert.equal(at('/held').length, 0);
  await clockIn({ db: pool }, v.endpoint.id, {});
  await until(() => at('/held').length === 1, 'the backlog');
  await settle();
  const backlog = at('/held');
  assert.equal(backlog.length, 1, 'one backlog across two servers');
  assert.equal(backlog[0]?.json.type, 'todos.backlog');
  assert.equal(backlog[0]?.json.pending, 1);
  assert.equal(at('/always').filter((r) => r.json.type === 'todos.backlog').length, 1);
});
