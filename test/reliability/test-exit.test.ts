// Pins the test runner's exit guard (scripts/test-exit.mjs): a file that leaks a timer still
// exits once its tests end, every verdict of it reaches the runner, and a failure keeps the
// file's exit code. Node's runner runs two fixture files here as npm test runs ours.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const guard = fileURLToPath(new URL('../../scripts/test-exit.mjs', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'switchboard-test-exit-'));
after(() => rm(dir, { recursive: true, force: true }));

const tests = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `test('${prefix} ${i}', () => {});`).join('\n');

async function run(files: Record<string, string>) {
  for (const [name, body] of Object.entries(files)) {
    await writeFile(join(dir, name), `import { test } from 'node:test';\n${body}\n`);
  }
  // As npm test starts it: not inside a test file's process.
  const { NODE_TEST_CONTEXT: _inside, ...env } = process.env;
  const started = Date.now();
  const child = spawnSync(
    process.execPath,
    ['--import', guard, '--test', '--test-reporter=spec', '--test-concurrency=2', ...Object.keys(files)],
    {
      cwd: dir,
      encoding: 'utf8',
      env: { ...env, SWITCHBOARD_TEST_EXIT_GRACE_MS: '1000' },
      timeout: 60_000,
    },
  );
  const count = (label: string) => Number(new RegExp(`^ℹ ${label} (\\d+)$`, 'm').exec(child.stdout)?.[1]);
  return { status: child.status, out: child.stdout + child.stderr, ms: Date.now() - started, count };
}

test('a file that leaks a timer exits after its tests, and all its verdicts are counted', async () => {
  const r = await run({
    'leak.test.mjs': `setInterval(() => {}, 1000);\n${tests('leak', 200)}`,
    'plain.test.mjs': tests('plain', 200),
  });
  assert.equal(r.status, 0, r.out);
  assert.equal(r.count('tests'), 400, r.out);
  assert.equal(r.count('pass'), 400, r.out);
  assert.match(r.out, /leak\.test\.mjs: something kept the event loop alive 1000 ms after the last test; exiting/);
  assert.ok(r.ms < 50_000, `the run ended (${r.ms} ms), not the spawn's timeout`);
});

test('a failing test in a leaking file keeps its name, its error and a failing exit code', async () => {
  const r = await run({
    'failing.test.mjs': `setInterval(() => {}, 1000);\n${tests('before', 50)}\ntest('the one that fails', () => { throw new Error('it failed'); });`,
  });
  assert.equal(r.status, 1, r.out);
  assert.equal(r.count('fail'), 1, r.out);
  assert.equal(r.count('pass'), 50, r.out);
  assert.match(r.out, /✖ the one that fails/);
  assert.match(r.out, /it failed/);
});
