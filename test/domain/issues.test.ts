// Pins the texts and rules parses keep from zod 3 on zod 4 (src/domain/issues.ts): every
// expected message below is what the same input answered under zod 3, field and all.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/schema.js';
import { vendInput } from '../../src/domain/endpoint.js';
import { capacityInput, sendInput } from '../../src/domain/messages.js';
import { createTodoInput, listTodosInput, parseInput } from '../../src/domain/todo.js';
import { clockInInput } from '../../src/presence/manage.js';
import { claimInput } from '../../src/todos/index.js';
import type { z } from 'zod';

function answer(schema: z.ZodType, input: unknown): string {
  try {
    parseInput(schema, input);
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  }
}

test('zod’s own problems are worded as zod 3 worded them', () => {
  const cases: Array<[z.ZodType, unknown, string]> = [
    [createTodoInput, { queue: 'inbox' }, 'title: Required'],
    [createTodoInput, { queue: 'inbox', title: 5 }, 'title: Expected string, received number'],
    [createTodoInput, null, 'input: Expected object, received null'],
    [createTodoInput, [], 'input: Expected object, received array'],
    [createTodoInput, { queue: 'inbox', title: 't', colour: 1 }, 'colour: is not a known field'],
    [createTodoInput, { queue: 'inbox', title: 't', kind: '' }, 'kind: String must contain at least 1 character(s)'],
    [
      listTodosInput,
      { state: 'bogus' },
      "state: Invalid enum value. Expected 'pending' | 'claimed' | 'done' | 'failed' | 'canceled' | 'waiting_on_human', received 'bogus'",
    ],
    [
      listTodosInput,
      { state: 3 },
      "state: Expected 'pending' | 'claimed' | 'done' | 'failed' | 'canceled' | 'waiting_on_human', received number",
    ],
    [listTodosInput, { limit: 1.5 }, 'limit: Expected integer, received float'],
    [listTodosInput, { limit: 201 }, 'limit: Number must be less than or equal to 200'],
    [listTodosInput, { limit: 0 }, 'limit: Number must be greater than or equal to 1'],
    [listTodosInput, { include_synthetic: 'yes' }, 'include_synthetic: Expected boolean, received string'],
    [vendInput, { name: 'a', verbs: [1] }, 'verbs.0: Expected string, received number'],
    [vendInput, { name: 'a', queues: ['OK'] }, 'queues.0: must match [a-z0-9][a-z0-9_-]{0,62}'],
    [vendInput, { name: 'a', queues: [] }, 'queues: must name at least one queue'],
    [clockInInput, { for: true }, 'for: Invalid input'],
  ];
  for (const [schema, input, expected] of cases) assert.equal(answer(schema, input), expected, JSON.stringify(input));
});

test('what zod 4 took or refused differently answers as under zod 3', () => {
  // Lengths count UTF-16 code units: 40 rockets are 80 of them.
  assert.equal(
    answer(listTodosInput, { cursor: '🚀'.repeat(40) }),
    'cursor: String must contain at most 64 character(s)',
  );
  assert.equal(answer(claimInput, { id: '🚀'.repeat(40) }), 'id: String must contain at most 64 character(s)');
  assert.equal(
    answer(sendInput, { session_id: '🚀'.repeat(101), content: 'x' }),
    'session_id: String must contain at most 200 character(s)',
  );
  // JSON's 1e400 is Infinity: the first check it fails answers, not its type.
  assert.equal(answer(listTodosInput, { limit: JSON.parse('1e400') }), 'limit: Expected integer, received float');
  assert.equal(answer(listTodosInput, { limit: -Infinity }), 'limit: Expected integer, received float');
  assert.equal(answer(capacityInput, { max_per_session: Infinity }), 'max_per_session: must be a whole number');
  assert.equal(answer(clockInInput, { for: Infinity }), 'ok');
  // A whole number beyond 2^53 is judged by the field's own bounds.
  assert.equal(answer(listTodosInput, { limit: 1e20 }), 'limit: Number must be less than or equal to 200');
  assert.equal(answer(capacityInput, { max_per_session: 1e20 }), 'ok');
  // zod 3's date-times: seconds optional, an offset with or without its colon.
  assert.equal(answer(vendInput, { name: 'a', expires_at: '2026-01-01T00:00Z' }), 'ok');
  assert.equal(answer(vendInput, { name: 'a', expires_at: '2026-01-01T00:00:00+0100' }), 'ok');
  assert.equal(
    answer(vendInput, { name: 'a', expires_at: '2026-02-30T00:00:00Z' }),
    'expires_at: must be an RFC 3339 time',
  );
});

test('the configuration’s problems keep their words, and a URL is kept as written', () => {
  const bad = parseConfig({
    SWITCHBOARD_LOG_LEVEL: 'loud',
    SWITCHBOARD_PUBLIC_URL: 'nope',
    SWITCHBOARD_METRICS_TOKEN: '🚀'.repeat(10),
  });
  assert.deepEqual(bad, {
    ok: false,
    problems: [
      "SWITCHBOARD_LOG_LEVEL: Invalid enum value. Expected 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent', received 'loud'",
      'SWITCHBOARD_PUBLIC_URL: Invalid url',
      'SWITCHBOARD_METRICS_TOKEN: must be at least 32 characters',
    ],
  });
  const padded = parseConfig({ SWITCHBOARD_PUBLIC_URL: ' http://x ' });
  assert.equal(padded.ok && padded.config.publicUrl, ' http://x ');
});
