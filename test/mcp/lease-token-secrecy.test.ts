// Pins that a lease token is shown once, to its claimer, and nowhere else
// (docs/design/todos.md, "Lease tokens"): with every log line kept at trace level and
// every span exported, a claim and a settle by token leave the token in no log line,
// no span name or attribute, no /metrics line and no operator API answer.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { startServer } from '../../src/main.js';
import { testDatabase } from '../helpers/db.js';
import { connect, ok } from './harness.js';

const { url: databaseUrl } = await testDatabase('mcp_lease_secrecy');
const exporter = new InMemorySpanExporter();
const lines: string[] = [];

const parsed = parseConfig({
  SWITCHBOARD_DATABASE_URL: databaseUrl,
  SWITCHBOARD_LISTEN: '127.0.0.1:0',
  SWITCHBOARD_INSTANCE_ID: 'secrecy',
  SWITCHBOARD_DB_POOL_SIZE: '4',
  SWITCHBOARD_AUTH: 'off',
});
assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
const server = await startServer(parsed.config, log, { tracing: { exporter } });
after(() => server.stop());

test('a lease token appears in no log line, span, metric or API answer', async () => {
  const vended = await fetch(`${server.url}/api/v1/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'secrecy' }),
  });
  assert.equal(vended.status, 201);
  const { credential } = (await vended.json()) as { credential: string };
  const claimer = await connect(server.url, credential, 'claimer');
  const other = await connect(server.url, credential, 'other');
  const { id } = (await ok(claimer, 'create_todo', { queue: 'inbox', title: 'keep it secret' })).todo as { id: string };
  const claimed = await ok(claimer, 'claim', { id });
  const token = claimed.lease_token as string;
  await ok(other, 'heartbeat', { id, lease_token: token });
  await ok(other, 'complete', { id, lease_token: token, summary: 'done' });

  const read = await fetch(`${server.url}/api/v1/todos/${id}`);
  assert.equal(read.status, 200);
  const metrics = await fetch(`${server.url}/metrics`);
  assert.equal(metrics.status, 200);
  await new Promise((r) => setTimeout(r, 100)); // the last response's log line
  const spans = exporter.getFinishedSpans();
  assert.ok(spans.length > 0, 'spans were exported');
  assert.ok(lines.length > 0, 'lines were logged');
  const seen = [
    ...lines,
    ...spans.map((s) => JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events })),
    await read.text(),
    await metrics.text(),
  ].join('\n');
  assert.ok(seen.includes(id), 'what was captured names the todo: the check can see what requests carried');
  // The secret part of the token, so that a prefix alone never matches.
  assert.equal(seen.includes(token.slice(3)), false, 'the lease token leaked');
});
