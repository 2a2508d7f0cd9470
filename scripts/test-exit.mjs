// Preloaded into every test file's process by scripts/test.mjs: a file whose tests have all
// ended exits even when something (a leaked server, pool or timer) keeps its event loop
// alive. Without it one leak held the whole run: a failing `after` hook skips the hooks
// added after it, and a server one of those would have stopped kept a file running for
// 77 minutes in CI.
//
// Node's own --test-force-exit does this, but it exits the moment the last test ends,
// while the verdicts are still on their way to the runner through the file's stdout (a
// pipe, written asynchronously): under load the runner silently lost the last verdicts of
// a file, and reported fewer tests than ran (8 of one file in a CI run under Node 24). Here
// the exit waits until stdout has been quiet for GRACE_MS with nothing queued, and the exit code is the
// one the test runner set. A file that exits on its own never waits: the timer is unref'd.

import { after } from 'node:test';
import { setTimeout } from 'node:timers';

const GRACE_MS = Number(process.env.SWITCHBOARD_TEST_EXIT_GRACE_MS ?? 5000);

// Only in a test file's own process (the runner sets NODE_TEST_CONTEXT there), never in
// the runner that spawns them.
if (process.env.NODE_TEST_CONTEXT) {
  // The reporter writes the verdicts to stdout through a piped stream: while the runner
  // has not read them, they wait in stdout's queue or, past its high-water mark, in the
  // reporter itself. Exiting then loses them (a CI run under load 19 counted 377 of a
  // file's 400 verdicts at a 300 ms grace), so the exit waits until stdout has been
  // quiet, with nothing queued, for GRACE_MS.
  let lastWrite = Date.now();
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (...args) => {
    lastWrite = Date.now();
    return write(...args);
  };
  // A leak that itself keeps writing (a server logging to stdout) would hold the file
  // forever: past ten graces it exits anyway.
  let deadline = Infinity;
  const exitWhenQuiet = () => {
    const quiet = Date.now() - lastWrite;
    if ((process.stdout.writableLength > 0 || quiet < GRACE_MS) && Date.now() < deadline) {
      setTimeout(exitWhenQuiet, Math.max(GRACE_MS - quiet, 50)).unref();
      return;
    }
    process.stderr.write(
      `${process.argv[1] ?? 'a test file'}: something kept the event loop alive ${GRACE_MS} ms after the last test; exiting\n`,
    );
    write('', () => process.exit());
  };
  after(() => {
    deadline = Date.now() + 10 * GRACE_MS;
    setTimeout(exitWhenQuiet, GRACE_MS).unref();
  });
}
