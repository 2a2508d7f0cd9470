// Pins the hints a client reads before it calls anything: every tool in tools/list carries
// MCP annotations (read-only verbs marked so, deleting verbs destructive, nothing open
// world), and initialize's instructions say how to wait for work.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allVerbs } from '../../src/domain/verbs.js';
import { toolsFor } from '../../src/mcp/verbs/index.js';
import { testDatabase } from '../helpers/db.js';
import { connect, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_annotations');
const app = await startApp(pool, 'instance-a');

/** Verbs that only read: list, get, whoami, status, presence, and the rules' dry run. */
const READ_ONLY = /^(list_|get_)|^(whoami|admission_status|presence|test_webhook_rules)$/;
/** Verbs that delete or replace for good. */
const DESTRUCTIVE = /^(clear_|delete_|remove_|rotate_)/;

test('every tool in tools/list has all four annotations; read-only and destructive verbs are marked', async () => {
  const { credential } = await vend(pool, {
    verbs: ['drain', 'create', 'messages', 'admission', 'hooks', 'webhooks', 'events', 'quarantine'],
  });
  const c = await connect(app.url, credential);
  const { tools } = await c.client.listTools();
  assert.deepEqual(
    tools.map((t) => t.name).sort(),
    toolsFor(allVerbs())
      .map((t) => t.name)
      .sort(),
    'every verb is listed',
  );
  for (const tool of tools) {
    const a = tool.annotations;
    assert.ok(a, `${tool.name} has annotations`);
    for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
      assert.equal(typeof a[key], 'boolean', `${tool.name}.${key}`);
    }
    assert.equal(a.openWorldHint, false, tool.name);
    assert.equal(a.readOnlyHint, READ_ONLY.test(tool.name), `${tool.name} readOnlyHint`);
    assert.equal(a.destructiveHint, DESTRUCTIVE.test(tool.name), `${tool.name} destructiveHint`);
    if (a.readOnlyHint) assert.equal(a.idempotentHint, true, `${tool.name}: a read is idempotent`);
  }
  const byName = new Map(tools.map((t) => [t.name, t.annotations]));
  assert.equal(byName.get('claim_next')?.idempotentHint, false);
  assert.equal(byName.get('create_todo')?.idempotentHint, false);
  assert.equal(byName.get('complete')?.idempotentHint, true);
  assert.equal(byName.get('delete_notify_hook')?.idempotentHint, true);
});

test('initialize answers instructions that say how to wait for work', async () => {
  const { credential } = await vend(pool);
  const c = await connect(app.url, credential);
  const instructions = c.client.getInstructions() ?? '';
  const waiting = instructions.split('\n').find((line) => line.startsWith('- Waiting for work'));
  assert.ok(waiting, instructions);
  assert.match(waiting, /notifications\/claude\/channel/);
  assert.match(waiting, /GET notification stream/);
  assert.match(waiting, /claim_next with wait_seconds/);
});
