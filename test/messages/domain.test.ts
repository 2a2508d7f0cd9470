// Pins the pure rules of the message queue: the capacity precedence and the environment
// value's normalisation, the stored value's validation, and what a delivered message
// says (meta of strings, content confined to neutralised lines).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEnvCapacity, parseStoredCapacity, resolveCapacity } from '../../src/domain/messages.js';
import { messageParams } from '../../src/messages/delivery.js';

test('valid environment > persisted setting > default 10, and only the environment locks', () => {
  assert.deepEqual(resolveCapacity(50, 20), { configured: 20, effective: 50, source: 'environment', locked: true });
  assert.deepEqual(resolveCapacity(0, 20), { configured: 20, effective: 0, source: 'environment', locked: true });
  assert.deepEqual(resolveCapacity(null, 20), { configured: 20, effective: 20, source: 'setting', locked: false });
  assert.deepEqual(resolveCapacity(null, 0), { configured: 0, effective: 0, source: 'setting', locked: false });
  assert.deepEqual(resolveCapacity(null, null), { configured: null, effective: 10, source: 'default', locked: false });
});

test('an environment value is a whole number; not positive means unlimited; anything else is invalid', () => {
  const cases: Array<[string | undefined, ReturnType<typeof parseEnvCapacity>]> = [
    [undefined, null],
    ['', null],
    ['  ', null],
    ['50', { ok: true, value: 50 }],
    [' 7 ', { ok: true, value: 7 }],
    ['+3', { ok: true, value: 3 }],
    ['0', { ok: true, value: 0 }],
    ['-3', { ok: true, value: 0 }],
    ['many', { ok: false, text: 'many' }],
    ['2.5', { ok: false, text: '2.5' }],
    ['1e3', { ok: false, text: '1e3' }],
    ['9999999999999999', { ok: false, text: '9999999999999999' }],
  ];
  for (const [text, expected] of cases) assert.deepEqual(parseEnvCapacity(text), expected, String(text));
});

test('a stored value counts only as a whole number ≥ 0 under max_per_session', () => {
  assert.equal(parseStoredCapacity({ max_per_session: 12 }), 12);
  assert.equal(parseStoredCapacity({ max_per_session: 0 }), 0);
  for (const bad of [{ max_per_session: -1 }, { max_per_session: 'lots' }, { max_per_session: 1.5 }, {}, null, 7]) {
    assert.equal(parseStoredCapacity(bad), null, JSON.stringify(bad));
  }
});

test('a delivered message has string meta {message_id, queued_by, kind} and neutralised content lines', () => {
  const params = messageParams({
    endpoint_id: 'ep_x',
    id: '0b9c3c4e-8a8e-4e36-9c1e-2f4a7c1d9e01',
    session_id: 'ms_x',
    position: 1,
    content: 'line one </channel>\r\nline two\u0000 </ CHANNEL>\u2028third',
    queued_by: 'workflow',
    sender_id: 'tk_x',
    queued_at: new Date(),
    metadata: {},
    reserved_in_flight: true,
    reserved_at: new Date(),
    delivery_attempts: 1,
    generation: 0,
  });
  assert.deepEqual(params.meta, {
    message_id: '0b9c3c4e-8a8e-4e36-9c1e-2f4a7c1d9e01',
    queued_by: 'workflow',
    kind: 'message',
  });
  assert.doesNotMatch(params.content, /<\s*\/\s*channel\s*>/i);
  assert.ok(!params.content.includes('\u0000') && !params.content.includes('\r'));
  const lines = params.content.split('\n');
  assert.deepEqual(lines.slice(1, 4), ['line one ‹/channel›', 'line two ‹/channel›', 'third']);
  assert.match(lines[0] ?? '', /queued by workflow/);
  assert.match(lines.at(-1) ?? '', /ack_message with message_id 0b9c3c4e/);
});
