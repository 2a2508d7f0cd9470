// Pins examples/: the producer pushes todos with the typed client and the MCP agent loop
// claims and completes them, both run as their header comments say, against a real server.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { apiHarness, makePeople, vend } from './app.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const h = await apiHarness('api_examples');
const { member } = await makePeople(h);
const { endpoint, credential } = await vend(h, member, { name: 'example agent', queues: ['inbox'] });
await h.app.listen({ host: '127.0.0.1', port: 0 });
const address = h.app.server.address();
assert.ok(address && typeof address === 'object');
const url = `http://127.0.0.1:${address.port}`;

function example(file: string, args: string[], env: Record<string, string>) {
  return run(process.execPath, ['--import', 'tsx', `examples/${file}`, ...args], {
    cwd: ROOT,
    env: { ...process.env, SWITCHBOARD_URL: url, ...env },
    timeout: 60_000,
  });
}

test('the producer pushes todos and the agent loop claims and completes each', async () => {
  const pushed = await example('producer.ts', ['2'], {
    SWITCHBOARD_TOKEN: member.token,
    SWITCHBOARD_ENDPOINT: endpoint.slug,
    RUN_ID: 'examples-test',
  });
  assert.match(pushed.stdout, /pushed 2, 0 already there/);
  const again = await example('producer.ts', ['2'], {
    SWITCHBOARD_TOKEN: member.token,
    SWITCHBOARD_ENDPOINT: endpoint.slug,
    RUN_ID: 'examples-test',
  });
  assert.match(again.stdout, /pushed 0, 2 already there/);
  const agent = await example('agent.ts', ['2'], { SWITCHBOARD_CREDENTIAL: credential });
  assert.equal(agent.stdout.match(/^completed /gm)?.length, 2, agent.stdout + agent.stderr);
  const list = await h.get(`/api/v1/endpoints/${endpoint.slug}/todos`, { token: member.token });
  const todos: Array<{ state: string }> = list.body.todos;
  assert.deepEqual(
    todos.map((t) => t.state),
    ['done', 'done'],
  );
});
