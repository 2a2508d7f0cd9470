// Pins the notification streams' bookkeeping (src/sessions/streams.ts): a keep-alive comment on
// each stream nothing was written to for 15 s, none on one just rung or not answered yet;
// one stream per session, and an ended one written to no more. Clock and timer are fakes.

import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { KEEP_ALIVE_MS, NotificationStreams } from '../../src/sessions/streams.js';

/** The slice of a ServerResponse the streams use, recording what is written. */
function response() {
  const written: string[] = [];
  const res = {
    destroyed: false,
    writableEnded: false,
    headers: undefined as Record<string, string> | undefined,
    writeHead(status: number, headers: Record<string, string>) {
      assert.equal(status, 200);
      res.headers = headers;
    },
    flushHeaders() {},
    write(chunk: string) {
      written.push(chunk);
      return true;
    },
    end() {
      res.writableEnded = true;
    },
  };
  return { res: res as unknown as ServerResponse & typeof res, written };
}

let now = 0;
beforeEach(() => {
  now = 0;
  mock.timers.enable({ apis: ['setInterval'] });
});
afterEach(() => mock.timers.reset());

/** Moves the fake clock and the fake timer on together, in the timer's steps. */
function advance(ms: number, step = 100) {
  for (let moved = 0; moved < ms; moved += step) {
    now += step;
    mock.timers.tick(step);
  }
}

const channel = { jsonrpc: '2.0' as const, method: 'notifications/claude/channel', params: { content: 'x' } };

test('a quiet answered stream gets a keep-alive comment every 15 s; a rung one only 15 s after its ring', () => {
  const streams = new NotificationStreams(() => now);
  const quiet = response();
  const rung = response();
  const pending = response();
  for (const [id, r] of [
    ['ms_quiet', quiet],
    ['ms_rung', rung],
  ] as const) {
    const stream = streams.reserve('en_1', id, r.res);
    assert.ok(stream && streams.answer(stream));
  }
  assert.ok(streams.reserve('en_1', 'ms_pending', pending.res), 'reserved, never answered');
  assert.equal(quiet.res.headers?.['Content-Type'], 'text/event-stream');
  assert.equal(quiet.res.headers?.['mcp-session-id'], 'ms_quiet');

  advance(10_000);
  assert.equal(streams.write('ms_rung', channel), true);
  assert.equal(streams.write('ms_pending', channel), false, 'nothing is written before the head');
  advance(KEEP_ALIVE_MS - 10_000 + 200);
  assert.deepEqual(quiet.written, [': keepalive\n\n']);
  assert.equal(rung.written.length, 1, 'the ring reset its quiet time');
  advance(10_000);
  assert.equal(rung.written.at(-1), ': keepalive\n\n');
  advance(KEEP_ALIVE_MS);
  assert.deepEqual(quiet.written, [': keepalive\n\n', ': keepalive\n\n']);
  assert.deepEqual(pending.written, []);
});

test('an ended stream has its response ended and is written to no more; a newer stream of the session stays', () => {
  const streams = new NotificationStreams(() => now);
  const one = response();
  const stream = streams.reserve('en_1', 'ms_one', one.res);
  assert.ok(stream && streams.answer(stream));
  assert.equal(streams.reserve('en_1', 'ms_one', response().res), null, 'one stream per session');
  streams.end('ms_one');
  assert.equal(one.res.writableEnded, true);
  assert.equal(streams.write('ms_one', channel), false);
  assert.equal(streams.remove(stream), false, 'already gone');
  advance(2 * KEEP_ALIVE_MS);
  assert.deepEqual(one.written, []);
  // A fresh reservation of the same session is a new stream; the old one's close must not remove it.
  const again = streams.reserve('en_1', 'ms_one', response().res);
  assert.ok(again);
  assert.equal(streams.remove(stream), false);
  assert.equal(streams.get('ms_one'), again);
});
