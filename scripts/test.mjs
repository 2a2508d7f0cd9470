// `npm test`: builds dist/ (scripts/build.mjs, incremental), then runs every
// test/**/*.test.ts with node's test runner (through tsx). Tests import src/ directly;
// the ones that spawn the CLI (bin/switchboard.js) run the compiled dist/, which the
// build just brought up to date, so they test what `npm ci` installs.
// With SWITCHBOARD_TEST_DATABASE_URL set, tests use that PostgreSQL (a superuser URL;
// each test file creates and drops its own database). Without it, this script starts a
// throwaway embedded PostgreSQL for the run, so a laptop with nothing installed passes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

async function findTests(dir) {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory() ? findTests(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
    ),
  );
  return nested.flat();
}

const filters = process.argv.slice(2);
const files = (await findTests(join(root, 'test')))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

let embedded = null;
let scratch = null;
const env = { ...process.env };
if (!env.SWITCHBOARD_TEST_DATABASE_URL) {
  const { startEmbedded } = await import('../dist/db/embedded.js');
  scratch = await mkdtemp(join(tmpdir(), 'switchboard-test-pg-'));
  process.stdout.write(`starting an embedded PostgreSQL for the tests in ${scratch}\n`);
  embedded = await startEmbedded({ dataDir: scratch, settings: { max_connections: '300', fsync: 'off' } });
  env.SWITCHBOARD_TEST_DATABASE_URL = embedded.url.replace(/\/switchboard$/, '/postgres');
}

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    // SWITCHBOARD_TEST_FILE_TIMES=path appends each file's wall time to path (a JSON line).
    ...(env.SWITCHBOARD_TEST_FILE_TIMES
      ? [`--test-reporter=${join(root, 'scripts', 'test-file-times.mjs')}`, '--test-reporter-destination=stdout']
      : []),
    // Files run two at a time: the tests mostly wait on PostgreSQL and on spawned servers,
    // but a 2-core machine runs those too. SWITCHBOARD_TEST_CONCURRENCY overrides it.
    `--test-concurrency=${env.SWITCHBOARD_TEST_CONCURRENCY ?? '2'}`,
    // Per test file and per test: a guard against a hang, not a speed limit. The board's
    // accessibility crawl takes ~100 s alone and passed 300 s on a loaded 2-core machine,
    // so the guard is 10 minutes; the fuzzers' long form (npm run test:fuzz) sets a longer one.
    `--test-timeout=${env.SWITCHBOARD_TEST_TIMEOUT_MS ?? '600000'}`,
    // A file whose tests have all ended exits even if something keeps its event loop alive,
    // once its verdicts have reached this runner (scripts/test-exit.mjs says why this is not
    // node's --test-force-exit). Test files inherit the flag; this process skips the hook.
    '--import',
    join(root, 'scripts', 'test-exit.mjs'),
    ...files,
  ],
  { cwd: root, env, stdio: 'inherit' },
);
const code = await new Promise((done) => child.on('exit', (c, signal) => done(c ?? (signal ? 1 : 0))));
if (embedded) {
  await embedded.stop();
  await rm(scratch, { recursive: true, force: true });
}
process.exit(code);
