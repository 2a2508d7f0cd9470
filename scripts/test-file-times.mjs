// A node:test reporter that scripts/test.mjs adds when SWITCHBOARD_TEST_FILE_TIMES names a
// file: per test file, the wall time from its first reported event after being queued to
// its last, and its number of top-level tests, slowest first, appended to that file as one
// JSON line per run with the Node.js version and the load average. Under Node 20 a file's
// first events can come before it runs, so with concurrency its span is an upper bound;
// time a suspect file alone (`npm test -- FILE`) before trusting its figure.
import { appendFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { relative } from 'node:path';

export default async function* fileTimes(source) {
  const started = Date.now();
  const files = new Map();
  for await (const event of source) {
    const file = event.data?.file;
    // Every file is enqueued when the run starts; its span starts when it is dequeued.
    if (!file || event.type === 'test:enqueue') continue;
    const now = Date.now();
    let f = files.get(file);
    if (!f) files.set(file, (f = { first: now, last: now, tests: 0, failed: 0 }));
    f.last = now;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      f.tests++;
      if (event.type === 'test:fail') f.failed++;
    }
  }
  const rows = [...files]
    .map(([file, f]) => ({
      file: relative(process.cwd(), file),
      s: (f.last - f.first) / 1000,
      tests: f.tests,
      failed: f.failed,
    }))
    .sort((a, b) => b.s - a.s);
  const run = {
    node: process.version,
    finished: new Date().toISOString(),
    wall_s: (Date.now() - started) / 1000,
    loadavg: loadavg().map((l) => Number(l.toFixed(2))),
    files: rows,
  };
  appendFileSync(process.env.SWITCHBOARD_TEST_FILE_TIMES, `${JSON.stringify(run)}\n`);
  yield '';
}
