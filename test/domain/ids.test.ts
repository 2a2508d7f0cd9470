// Pins the ids: ULID-based ids sort by creation, MCP session ids come from a CSPRNG and
// carry no order or time (docs/design/mcp-surface.md, "Why random session ids").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeTime } from 'ulid';
import { isId, newId, newSessionId, randomPool } from '../../src/domain/ids.js';

const SESSION_ID = /^ms_[0-9A-HJKMNP-TV-Z]{26}$/;

test('session ids are ms_ and 26 base32 characters, each one new', () => {
  const ids = Array.from({ length: 10_000 }, () => newSessionId());
  for (const id of ids.slice(0, 100)) {
    assert.match(id, SESSION_ID);
    assert.ok(isId('ms', id));
  }
  assert.equal(new Set(ids).size, ids.length);
});

test('session ids made one after another do not sort in the order they were made, and hold no time', () => {
  const ids = Array.from({ length: 200 }, () => newSessionId());
  assert.notDeepEqual([...ids].sort(), ids, 'made in order, they would sort in order if they were ULIDs');
  // Read as a ULID, a random id names no instant near now (a ULID made now would).
  const now = Date.now();
  const near = ids.filter((id) => {
    const text = id.slice(3);
    return text[0] !== undefined && text[0] <= '7' && Math.abs(decodeTime(text) - now) < 86_400_000;
  });
  assert.equal(near.length, 0);
  // The other ids are ULIDs and do sort by creation.
  const todos = Array.from({ length: 200 }, () => newId('td'));
  assert.deepEqual([...todos].sort(), todos);
});

test('every bit of a session id is used: each of the 32 characters appears in every position but the first', () => {
  const ids = Array.from({ length: 4_000 }, () => newSessionId().slice(3));
  for (let position = 1; position < 26; position++) {
    assert.equal(new Set(ids.map((id) => id[position])).size, 32, `position ${position}`);
  }
  assert.equal(new Set(ids.map((id) => id[0])).size, 8, 'the first carries the top 3 of 128 bits');
});

test('the pooled randomness behind the ULIDs is uniform over the 32 characters, across pool refills', () => {
  const draw = randomPool(64);
  const counts = new Array<number>(32).fill(0);
  const n = 64_000;
  for (let i = 0; i < n; i++) {
    const x = draw();
    assert.ok(x >= 0 && x < 1);
    const k = Math.floor(x * 32);
    counts[k] = (counts[k] ?? 0) + 1;
  }
  // Each character expects 2,000; 6 standard deviations (~264) is far from any fair run.
  for (const [character, seen] of counts.entries()) assert.ok(Math.abs(seen - 2_000) < 264, `${character}: ${seen}`);
  // The ids drawing from it: the random parts (after the 10 time characters) never repeat.
  const ids = Array.from({ length: 5_000 }, () => newId('td').slice(13));
  assert.equal(new Set(ids).size, ids.length);
});
