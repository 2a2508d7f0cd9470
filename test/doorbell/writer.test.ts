// Pins the pieces behind the doorbell's bookkeeping: the bounded ring writer (never waits,
// drops and counts on overflow, records only what it is handed), the unheard sweep's one
// warning per session per run, SWITCHBOARD_DOORBELL_ACK_WINDOW's range, and the hints
// table rendered into docs/doorbell.md.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { newId } from '../../src/domain/ids.js';
import { clientFamily, hintGuidance, hintsFor, hintsMarkdown, VERDICTS } from '../../src/doorbell/hints.js';
import { RingRowWriter, type DeliveredRing } from '../../src/doorbell/ring-writer.js';
import { Metrics } from '../../src/metrics/index.js';
import { unheardSweep } from '../../src/sweeps/unheard.js';
import { testDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('ring_writer');

function ring(endpointId: string, sessionId: string): DeliveredRing {
  return {
    id: newId('rg'),
    endpointId,
    sessionId,
    todoId: newId('td'),
    kind: 'todo',
    queue: 'inbox',
    synthetic: false,
    claimsBefore: 0,
  };
}

function logLines() {
  const lines: Array<{ level: number; msg: string; session?: string }> = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  return { log, lines };
}

async function value(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
}

test('the ring writer returns at once, drops and counts what overflows its buffer, and inserts the rest', async () => {
  const endpoint = await makeEndpoint(pool);
  const metrics = new Metrics({ defaults: false });
  const { log, lines } = logLines();
  const writer = new RingRowWriter({ db: pool, log, metrics: metrics.doorbell, capacity: 5 });
  const rings = Array.from({ length: 8 }, () => ring(endpoint.id, 'ms_w'));
  const started = performance.now();
  const accepted = rings.map((r) => writer.record(r));
  // A database round trip would be one insert per ring; 500 ms leaves room for a GC pause on a loaded machine.
  assert.ok(performance.now() - started < 500, 'record() never waits for the database');
  // The first record starts an insert at once and leaves the buffer; five more fill it.
  assert.deepEqual(accepted, [true, true, true, true, true, true, false, false]);
  await writer.flush();
  const rows = await pool.query('SELECT id FROM doorbell_rings WHERE endpoint_id = $1 ORDER BY id', [endpoint.id]);
  assert.deepEqual(
    rows.rows.map((r: { id: string }) => r.id),
    rings.slice(0, 6).map((r) => r.id),
  );
  assert.equal(await value(metrics, 'switchboard_doorbell_ring_records_dropped_total', { reason: 'overflow' }), 2);
  assert.equal(await value(metrics, 'switchboard_doorbell_rings_total', { kind: 'todo' }), 6);
  assert.equal(lines.filter((l) => l.level === 40).length, 1, 'overflow is logged once, counted always');
});

test('a synthetic ring is recorded but counted by no metric', async () => {
  const endpoint = await makeEndpoint(pool);
  const metrics = new Metrics({ defaults: false });
  const writer = new RingRowWriter({ db: pool, log: pino({ level: 'silent' }), metrics: metrics.doorbell });
  writer.record({ ...ring(endpoint.id, 'ms_t'), kind: 'test', synthetic: true });
  await writer.flush();
  assert.equal((await pool.query('SELECT 1 FROM doorbell_rings WHERE endpoint_id = $1', [endpoint.id])).rowCount, 1);
  assert.equal(await value(metrics, 'switchboard_doorbell_rings_total', { kind: 'test' }), 0);
});

test('the unheard sweep warns once per session per run, even when the session is marked again', async () => {
  const endpoint = await makeEndpoint(pool);
  await pool.query(`INSERT INTO mcp_sessions (endpoint_id, id, instance) VALUES ($1, 'ms_deaf', 'x')`, [endpoint.id]);
  const { log, lines } = logLines();
  const sweep = unheardSweep({ db: pool, log, ackWindowMs: 60_000 });
  const writer = new RingRowWriter({ db: pool, log });
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 3; i++) writer.record(ring(endpoint.id, 'ms_deaf'));
    await writer.flush();
    await pool.query(`UPDATE doorbell_rings SET sent_at = now() - interval '5 minutes' WHERE unheard_at IS NULL`);
    await sweep.run();
    const marked = await pool.query(`SELECT unheard FROM mcp_sessions WHERE id = 'ms_deaf'`);
    assert.equal(marked.rows[0].unheard, true, `round ${round}: marked`);
    await pool.query(`UPDATE mcp_sessions SET unheard = false WHERE id = 'ms_deaf'`);
  }
  const warnings = lines.filter((l) => l.level === 40 && l.session === 'ms_deaf');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]?.msg ?? '', /delivered but not heard/);
});

test('SWITCHBOARD_DOORBELL_ACK_WINDOW defaults to 15m and outside 1m–6h fails naming the variable', () => {
  const defaults = parseConfig({});
  assert.ok(defaults.ok);
  assert.equal(defaults.config.doorbell.ackWindowMs, 900_000);
  for (const bad of ['30s', '7h', 'soon']) {
    const result = parseConfig({ SWITCHBOARD_DOORBELL_ACK_WINDOW: bad });
    assert.equal(result.ok, false, bad);
    assert.ok(!result.ok && result.problems.some((p) => p.startsWith('SWITCHBOARD_DOORBELL_ACK_WINDOW:')), bad);
  }
  const edge = parseConfig({ SWITCHBOARD_DOORBELL_ACK_WINDOW: '6h' });
  assert.ok(edge.ok && edge.config.doorbell.ackWindowMs === 21_600_000);
});

test('hints are keyed by verdict and the client family from clientInfo.name, and docs/doorbell.md renders the same table', () => {
  assert.equal(clientFamily('claude-code'), 'claude-code');
  assert.equal(clientFamily('crush'), 'crush');
  assert.equal(clientFamily('cursor'), 'other');
  assert.equal(clientFamily(null), 'other');
  const g = hintGuidance('reviewer-4aja3u8v', 'https://sb.example');
  assert.deepEqual(hintsFor('pass', 'claude-code', g), []);
  const claude = hintsFor('no_stream', 'claude-code', g);
  assert.match(claude[0] ?? '', /--dangerously-load-development-channels server:reviewer-4aja3u8v /);
  assert.ok(claude.some((h) => h.includes('--allowedTools mcp__reviewer-4aja3u8v,')));
  assert.ok(claude.some((h) => h.includes('switchboard bridge --url https://sb.example --token-file')));
  assert.ok(!claude.join(' ').includes('server:switchboard'), 'no hint names a server called switchboard');
  assert.match(hintsFor('unheard', 'crush', g)[0] ?? '', /notifications\/claude\/channel/);
  assert.ok(hintsFor('unheard', 'other', g).some((h) => h.includes('claim_next {wait_seconds}')));
  assert.equal(
    hintsFor('write_failed', 'other', g).at(-1),
    'Troubleshooting: https://sb.example/docs/doorbell (the doorbell, the self-test verdicts and these hints)',
  );
  const all = VERDICTS.flatMap((v) => ['claude-code', 'crush', 'other'].flatMap((c) => hintsFor(v, c, g))).join(' ');
  assert.doesNotMatch(all, /ADR-|docs\/doorbell\.md|Harness/, 'no hint cites a repository path or a foreign document');
  assert.match(
    hintsFor('unheard', 'claude-code', hintGuidance('a-1', null)).at(-1) ?? '',
    /<SWITCHBOARD_URL>\/docs\/doorbell/,
  );
  const doc = readFileSync(new URL('../../docs/doorbell.md', import.meta.url), 'utf8');
  assert.ok(doc.includes(hintsMarkdown()), 'docs/doorbell.md carries hintsMarkdown() verbatim');
});
