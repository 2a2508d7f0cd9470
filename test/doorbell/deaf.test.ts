// Pins the deaf-session warning: three consecutive failed writes to one session warn
// once per run; a successful write resets the count.

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import type { Pool } from '../../src/db/pool.js';
import { Doorbell } from '../../src/doorbell/pump.js';
import type { Bus } from '../../src/domain/events.js';

function harness(results: boolean[]) {
  const lines: Array<{ level: number; msg: string; session?: string }> = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  const handlers = new Map<string, (e: Record<string, unknown>) => void>();
  const bus = {
    subscribe: (type: string, h: (e: Record<string, unknown>) => void) => (handlers.set(type, h), () => {}),
    onReconnect: () => () => {},
  } as unknown as Bus;
  const doorbell = new Doorbell({
    db: {} as Pool,
    instanceId: 'me',
    log,
    writer: { ring: async () => results.shift() ?? false },
  });
  doorbell.listen(bus);
  const ring = async (session: string, instance = 'me') => {
    handlers.get('ring')?.({
      instance,
      session_id: session,
      params: { content: 'x', meta: { ring_id: 'rg_1' } },
    });
    await new Promise((r) => setImmediate(r));
  };
  return { doorbell, ring, warnings: () => lines.filter((l) => l.level === 40) };
}

test('three failed writes in a row warn once for that session, and never again in this run', async () => {
  const h = harness([false, false, false, false, false]);
  for (let i = 0; i < 5; i++) await h.ring('ms_deaf');
  assert.equal(h.warnings().length, 1);
  assert.equal(h.warnings()[0]?.session, 'ms_deaf');
  assert.equal(h.doorbell.written, 0);
});

test('a successful write in between resets the count', async () => {
  const h = harness([false, false, true, false, false]);
  for (let i = 0; i < 5; i++) await h.ring('ms_flaky');
  assert.equal(h.warnings().length, 0);
  assert.equal(h.doorbell.written, 1);
});

test('a ring notice meant for another instance is left to that instance', async () => {
  const h = harness([true, true]);
  await h.ring('ms_elsewhere', 'other');
  assert.equal(h.doorbell.written, 0);
  await h.ring('ms_here');
  assert.equal(h.doorbell.written, 1);
});
