// Pins the `endpoint` label of the queue series: two tenants' queues of one name are two
// series, and past the cap the rest are summed into endpoint="_other" and counted.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../../src/metrics/index.js';
import { collectFromDatabase } from '../../src/metrics-reads.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';

const { pool } = await testDatabase('metrics_endpoint_label');

async function scrape(maxEndpoints: number): Promise<string> {
  const metrics = new Metrics({ defaults: false, maxEndpoints });
  collectFromDatabase(metrics, pool);
  return metrics.registry.metrics();
}

const sample = (text: string, series: string, labels: string) =>
  Number(new RegExp(`^${series}\\{${labels.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\} (\\S+)$`, 'm').exec(text)?.[1]);

test('two endpoints with a queue of one name give two series told apart by endpoint; past the cap they fold into _other', async () => {
  const a = await vend(pool, { queues: ['inbox'] });
  const b = await vend(pool, { queues: ['inbox'] });
  const c = await vend(pool, { queues: ['inbox'] });
  // The maintained counters the scrape reads (store/todo-counts.ts), set as creates would.
  await pool.query(
    `INSERT INTO todo_counts (endpoint_id, queue, state, n) VALUES ($1, 'inbox', 'pending', 1), ($2, 'inbox', 'pending', 2), ($3, 'inbox', 'pending', 4)`,
    [a.endpoint.id, b.endpoint.id, c.endpoint.id],
  );
  const [ea, eb, ec] = [a, b, c].map((v) => v.endpoint.slug);

  const all = await scrape(100);
  const counts = [ea, eb, ec].map((e) =>
    sample(all, 'switchboard_queue_todos', `endpoint="${e}",queue="inbox",state="pending"`),
  );
  assert.deepEqual(counts, [1, 2, 4], all);
  assert.equal(sample(all, 'switchboard_queue_endpoints_folded', '') || 0, 0);

  const capped = await scrape(1);
  const labelled = [ea, eb, ec].filter((e) => capped.includes(`endpoint="${e}"`));
  assert.equal(labelled.length, 1, capped);
  const other = sample(capped, 'switchboard_queue_todos', 'endpoint="_other",queue="inbox",state="pending"');
  const kept = sample(capped, 'switchboard_queue_todos', `endpoint="${labelled[0]}",queue="inbox",state="pending"`);
  assert.equal(
    other + kept,
    counts.reduce((x, y) => x + y, 0),
  );
  assert.match(capped, /^switchboard_queue_endpoints_folded 2$/m);
});
