// Pins that the compiled package finds its own files from an install folder with a space
// in its name: bin/, dist/, migrations/ and package.json copied as a packed tarball holds
// them, then `version`, `migrate` and `serve` run from the copy and the board's static
// files come out byte for byte (paths from import.meta.url go through fileURLToPath;
// `new URL(…).pathname` would look for `install%20path`).

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { loadMigrations } from '../../src/db/migrate.js';
import { versionInfo } from '../../src/version.js';
import { emptyDatabase } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// A loaded machine can take a while to start serve; every wait is bounded.
const READY_TIMEOUT_MS = 120_000;

let install = '';
const children = new Set<ChildProcess>();

before(async () => {
  install = join(await mkdtemp(join(tmpdir(), 'switchboard-')), 'install path with space');
  for (const part of ['bin', 'dist', 'migrations', 'package.json', 'build-info.json']) {
    if (existsSync(join(ROOT, part))) await cp(join(ROOT, part), join(install, part), { recursive: true });
  }
  // The dependencies an install would have beside it.
  await symlink(join(ROOT, 'node_modules'), join(install, 'node_modules'), 'dir');
});

after(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (install) await rm(join(install, '..'), { recursive: true, force: true });
});

/** The environment minus every SWITCHBOARD_* variable of ours, plus `vars`. */
function envWith(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  return { ...env, ...vars };
}

function start(
  args: string[],
  vars: Record<string, string>,
): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [join(install, 'bin', 'switchboard.js'), ...args], {
    cwd: install,
    env: envWith(vars),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  return { child, out: () => out, err: () => err };
}

/** Runs a command from the copy to its end; resolves with its stdout. */
async function run(args: string[], vars: Record<string, string> = {}): Promise<string> {
  const { child, out, err } = start(args, vars);
  const [code] = (await once(child, 'close')) as [number | null];
  assert.equal(code, 0, `switchboard ${args.join(' ')} exits 0; stderr: ${err()}`);
  return out();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

test('version from the copy reads its package.json and build-info.json', async () => {
  assert.deepEqual(JSON.parse(await run(['version', '--json'])), versionInfo());
});

test('migrate and serve from the copy apply its migrations and serve the board static files', async () => {
  const database = await emptyDatabase('install_path');
  const migrated = JSON.parse(await run(['migrate', '--json'], { SWITCHBOARD_DATABASE_URL: database })) as {
    applied: number[];
  };
  assert.equal(migrated.applied.length, (await loadMigrations()).length, 'every migration found and applied');

  const port = await freePort();
  const serve = start(['serve'], {
    SWITCHBOARD_DATABASE_URL: database,
    SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
    SWITCHBOARD_LOG_LEVEL: 'warn',
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    assert.equal(serve.child.exitCode, null, `serve exited before ready: ${serve.err()}`);
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    if (res?.status === 200) break;
    assert.ok(Date.now() < deadline, `serve not ready within ${READY_TIMEOUT_MS} ms: ${serve.err()}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  const originals = {
    'board.css': join(ROOT, 'src/board/static/board.css'),
    'board.js': join(ROOT, 'src/board/static/board.js'),
    'htmx.min.js': createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'),
  };
  for (const [name, path] of Object.entries(originals)) {
    const res = await fetch(`${base}/board/static/${name}`, { signal: AbortSignal.timeout(5_000) });
    assert.equal(res.status, 200, name);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), await readFile(path), `${name} is the package's file`);
  }

  serve.child.kill('SIGTERM');
  const [code] = (await once(serve.child, 'exit')) as [number | null];
  assert.equal(code, 0, `serve exits 0 on SIGTERM: ${serve.err()}`);
});
