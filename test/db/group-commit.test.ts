// Pins the group-commit lane (no database): an idle lane runs a call alone at once, calls
// queued behind a running statement go together in the next, batches are bounded, and a
// failed batch fails only the inputs whose own run fails (or every caller, when the
// failure is the connection's).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupCommit, GroupCommitLanes, type GroupCommitOptions } from '../../src/db/group-commit.js';

/** A lane over a fake statement that records what each run carried and answers when told. */
function harness(over: Partial<GroupCommitOptions<number, string>> = {}) {
  const runs: number[][] = [];
  const gates: (() => void)[] = [];
  const held = () => new Promise<void>((resolve) => gates.push(resolve));
  const options: GroupCommitOptions<number, string> = {
    one: async (n) => {
      runs.push([n]);
      await held();
      if (n < 0) throw new Error(`bad ${n}`);
      return `one:${n}`;
    },
    many: async (ns) => {
      runs.push(ns);
      await held();
      if (ns.some((n) => n < 0)) throw new Error('batch failed');
      return ns.map((n) => `many:${n}`);
    },
    maxBatch: 3,
    alone: () => true,
    ...over,
  };
  const release = async () => {
    for (let i = 0; i < 20 && gates.length === 0; i++) await new Promise((r) => setImmediate(r));
    gates.shift()?.();
  };
  return { options, runs, release };
}

test('an idle lane runs a call at once, alone, with the single statement', async () => {
  const h = harness();
  const lane = new GroupCommit(h.options);
  const answer = lane.submit(1);
  await h.release();
  assert.equal(await answer, 'one:1');
  assert.deepEqual(h.runs, [[1]]);
});

test('calls that arrive while a statement runs go together in the next, at most maxBatch each', async () => {
  const h = harness();
  const lane = new GroupCommit(h.options);
  const answers = [1, 2, 3, 4, 5].map((n) => lane.submit(n));
  await h.release(); // [1] alone
  await h.release(); // [2, 3, 4]
  await h.release(); // [5] alone
  assert.deepEqual(await Promise.all(answers), ['one:1', 'many:2', 'many:3', 'many:4', 'one:5']);
  assert.deepEqual(h.runs, [[1], [2, 3, 4], [5]]);
});

test('a failed batch runs each input again alone: only the bad input fails', async () => {
  const h = harness();
  const lane = new GroupCommit(h.options);
  const answers = [1, 2, -3, 4].map((n) => lane.submit(n).catch((e: Error) => e.message));
  await h.release(); // [1]
  await h.release(); // [2, -3, 4] fails
  for (let i = 0; i < 3; i++) await h.release(); // each alone
  assert.deepEqual(await Promise.all(answers), ['one:1', 'one:2', 'bad -3', 'one:4']);
});

test("a batch failing for the connection's sake fails every caller and runs nothing again", async () => {
  const h = harness({ alone: () => false });
  const lane = new GroupCommit(h.options);
  const answers = [1, 2, -3].map((n) => lane.submit(n).catch((e: Error) => e.message));
  await h.release();
  await h.release();
  assert.deepEqual(await Promise.all(answers), ['one:1', 'batch failed', 'batch failed']);
  assert.deepEqual(h.runs, [[1], [2, -3]]);
});

test('lanes coalesce only calls of the same key, and an idle lane is dropped', async () => {
  const h = harness();
  const lanes = new GroupCommitLanes(h.options);
  const answers = [lanes.submit('a', 1), lanes.submit('b', 2), lanes.submit('a', 3), lanes.submit('a', 4)];
  assert.equal(lanes.size, 2);
  for (let i = 0; i < 3; i++) await h.release();
  assert.deepEqual(await Promise.all(answers), ['one:1', 'one:2', 'many:3', 'many:4']);
  assert.deepEqual(h.runs, [[1], [2], [3, 4]]);
  assert.equal(lanes.size, 0);
});
