// Pins `switchboard serve` and `migrate` as real processes: the embedded PostgreSQL's
// lifecycle (start, SIGTERM, restart, data dir lock, orphan after SIGKILL, stale lock
// file), a bad environment refused before anything starts, and migrate --json.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import pg from 'pg';
import { loadMigrations } from '../../src/db/migrate.js';
import { versionInfo } from '../../src/version.js';
import { emptyDatabase } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');
// First start runs initdb; a loaded machine can take a while. Every wait is bounded.
const READY_TIMEOUT_MS = 120_000;
const EXIT_TIMEOUT_MS = 60_000;

interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const procs = new Set<Proc>();
const dataDirs: string[] = [];

/** The environment minus every SWITCHBOARD_* variable of ours, plus `vars`. */
function envWith(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  return { ...env, ...vars };
}

function cli(args: string[], vars: Record<string, string>): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: envWith(vars),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const proc = { child, stdout: () => out, stderr: () => err, exited };
  procs.add(proc);
  void exited.then(() => procs.delete(proc));
  return proc;
}

async function exitOf(
  proc: Proc,
  timeoutMs = EXIT_TIMEOUT_MS,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within ${timeoutMs} ms; stderr: ${proc.stderr()}`)), timeoutMs);
  });
  try {
    return await Promise.race([proc.exited, expired]);
  } finally {
    clearTimeout(timer);
  }
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

async function freshDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-serve-test-'));
  dataDirs.push(dir);
  return dir;
}

/** Starts `serve` on the embedded database of dataDir; resolves with its base URL once /readyz is 200. */
async function serve(dataDir: string, vars: Record<string, string> = {}): Promise<{ proc: Proc; base: string }> {
  const port = await freePort();
  const proc = cli(['serve'], { SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_LISTEN: `127.0.0.1:${port}`, ...vars });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(`serve exited (${proc.child.exitCode ?? proc.child.signalCode}) before ready: ${proc.stderr()}`);
    }
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    if (res?.status === 200) return { proc, base };
    if (Date.now() > deadline)
      throw new Error(`serve not ready within ${READY_TIMEOUT_MS} ms; stderr: ${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.json() };
}

/** Alive and not a zombie (an exited process nobody has reaped yet counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/^\d+ \(.*\) Z/.test(stat);
}

function postmasterPid(dataDir: string): number | null {
  const file = join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** A client on the embedded database, from the port and password the data dir records. */
async function embeddedClient(dataDir: string): Promise<pg.Client> {
  const { port } = JSON.parse(await readFile(join(dataDir, 'embedded.json'), 'utf8')) as { port: number };
  const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'switchboard' });
  await client.connect();
  return client;
}

async function stopServe(proc: Proc): Promise<void> {
  proc.child.kill('SIGTERM');
  const { code, signal } = await exitOf(proc);
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, `serve exits 0 on SIGTERM; stderr: ${proc.stderr()}`);
}

after(async () => {
  for (const proc of procs) proc.child.kill('SIGTERM');
  await Promise.all([...procs].map((p) => exitOf(p, 30_000).catch(() => p.child.kill('SIGKILL'))));
  for (const dir of dataDirs) {
    const pid = postmasterPid(dir);
    if (pid && alive(pid)) {
      process.kill(pid, 'SIGINT');
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  }
});

test(
  'serve with no database URL runs an embedded PostgreSQL, stops it on SIGTERM, and keeps the data for the next start',
  { timeout: 300_000 },
  async () => {
    const dataDir = await freshDataDir();
    const first = await serve(dataDir);
    assert.deepEqual(await getJson(`${first.base}/healthz`), { status: 200, body: { status: 'ok' } });
    {
      const ready = await getJson(`${first.base}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal((ready.body as { status?: unknown }).status, 'ready');
    }
    assert.deepEqual(await getJson(`${first.base}/version`), { status: 200, body: versionInfo() });

    const pgPid = postmasterPid(dataDir);
    assert.ok(pgPid && alive(pgPid), 'the embedded PostgreSQL runs');
    const client = await embeddedClient(dataDir);
    try {
      await client.query(
        `INSERT INTO humans (id, email, role) VALUES ('hu_serve_test', 'serve@example.test', 'admin')`,
      );
    } finally {
      await client.end();
    }

    await stopServe(first.proc);
    assert.equal(alive(pgPid), false, 'the embedded PostgreSQL stopped with serve');
    // stdout is a pipe: JSON lines, the last one saying what was stopped.
    const last = JSON.parse(first.proc.stdout().trim().split('\n').at(-1)!) as { msg: string; stopped: string[] };
    assert.match(last.msg, /^stopped: sweeps, HTTP server, .*embedded PostgreSQL.* \(\d+\.\d s\)$/);
    assert.ok(last.stopped.includes('database pool'), last.msg);
    assert.equal(existsSync(join(dataDir, 'pg', 'postmaster.pid')), false);
    assert.equal(existsSync(join(dataDir, 'switchboard.pid')), false, 'the data dir lock is released');

    // SWITCHBOARD_LOG_FORMAT=pretty: one readable line per event even into a pipe.
    const second = await serve(dataDir, { SWITCHBOARD_LOG_FORMAT: 'pretty' });
    const again = await embeddedClient(dataDir);
    try {
      const rows = await again.query(`SELECT email FROM humans WHERE id = 'hu_serve_test'`);
      assert.deepEqual(rows.rows, [{ email: 'serve@example.test' }]);
    } finally {
      await again.end();
    }
    await stopServe(second.proc);
    const lines = second.proc.stdout().trim().split('\n');
    assert.ok(
      lines.every((line) => !line.startsWith('{')),
      second.proc.stdout(),
    );
    assert.ok(
      lines.some((line) =>
        /^\d\d:\d\d:\d\d\.\d{3} INFO {2}switchboard .* listening on http:\/\/127\.0\.0\.1:\d+ .* version=/.test(line),
      ),
      second.proc.stdout(),
    );
    assert.match(lines.at(-1)!, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}stopped: sweeps, HTTP server, .* stopped=\[/);
  },
);

test(
  'a second serve on a data dir in use exits non-zero naming the data dir, and the first keeps serving',
  { timeout: 300_000 },
  async () => {
    const dataDir = await freshDataDir();
    const first = await serve(dataDir);
    const pgPid = postmasterPid(dataDir);
    const intruder = cli(['serve'], {
      SWITCHBOARD_DATA_DIR: dataDir,
      SWITCHBOARD_LISTEN: `127.0.0.1:${await freePort()}`,
    });
    const { code } = await exitOf(intruder);
    assert.notEqual(code, 0);
    assert.ok(intruder.stderr().includes(dataDir), `stderr names ${dataDir}: ${intruder.stderr()}`);
    assert.match(intruder.stderr(), /in use/);
    assert.equal(postmasterPid(dataDir), pgPid, 'the running PostgreSQL was left alone');
    assert.equal((await getJson(`${first.base}/readyz`)).status, 200);
    await stopServe(first.proc);
  },
);

test(
  'a serve killed with SIGKILL leaves an orphan PostgreSQL that the next start stops and replaces',
  { timeout: 300_000 },
  async () => {
    const dataDir = await freshDataDir();
    const killed = await serve(dataDir);
    const orphan = postmasterPid(dataDir);
    assert.ok(orphan);
    killed.proc.child.kill('SIGKILL');
    assert.deepEqual(await exitOf(killed.proc), { code: null, signal: 'SIGKILL' });
    assert.equal(alive(orphan), true, 'PostgreSQL outlives a hard-killed serve');

    const next = await serve(dataDir);
    assert.equal(alive(orphan), false, 'the orphan was stopped');
    const replacement = postmasterPid(dataDir);
    assert.ok(replacement && replacement !== orphan && alive(replacement), 'a new PostgreSQL serves');
    assert.match(next.proc.stdout(), new RegExp(`stopping PostgreSQL \\(pid ${orphan}\\)`));
    await stopServe(next.proc);
    assert.equal(alive(replacement), false);
  },
);

test(
  'a stale postmaster.pid whose pid now belongs to an unrelated process leaves that process alone, and serve starts',
  { timeout: 300_000 },
  async () => {
    const dataDir = await freshDataDir();
    const first = await serve(dataDir);
    const pidFile = join(dataDir, 'pg', 'postmaster.pid');
    const lockLines = (await readFile(pidFile, 'utf8')).split('\n');
    await stopServe(first.proc);
    // As after a power loss and a reboot: the lock file survived and its pid was reused.
    const bystander = spawn('sleep', ['300'], { stdio: 'ignore' });
    try {
      const owner = await stat(join(dataDir, 'pg'));
      await writeFile(pidFile, [String(bystander.pid), ...lockLines.slice(1)].join('\n'));
      await chown(pidFile, owner.uid, owner.gid);
      const next = await serve(dataDir);
      assert.equal(
        alive(bystander.pid!),
        true,
        `serve signalled pid ${bystander.pid}, an unrelated process named by a stale postmaster.pid`,
      );
      await stopServe(next.proc);
    } finally {
      bystander.kill('SIGKILL');
    }
  },
);

test(
  'serve listening beyond loopback without SWITCHBOARD_METRICS_TOKEN exits 2 naming the setting, before starting anything',
  { timeout: 60_000 },
  async () => {
    const dataDir = join(await freshDataDir(), 'never-created');
    const proc = cli(['serve'], { SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_LISTEN: '0.0.0.0:0' });
    const { code } = await exitOf(proc);
    assert.equal(code, 2);
    assert.match(proc.stderr(), /SWITCHBOARD_METRICS_TOKEN: required when listening on 0\.0\.0\.0/);
    assert.equal(existsSync(dataDir), false, 'no embedded PostgreSQL was started');
  },
);

test(
  'serve with a bad environment exits 2 listing every problem before starting anything',
  { timeout: 60_000 },
  async () => {
    const dataDir = join(await freshDataDir(), 'never-created');
    const proc = cli(['serve'], {
      SWITCHBOARD_DATA_DIR: dataDir,
      SWITCHBOARD_LISTEN: 'nope',
      SWITCHBOARD_DEFAULT_LEASE: '1s',
      SWITCHBOARD_LOG_LEVEL: 'loud',
    });
    const { code } = await exitOf(proc);
    assert.equal(code, 2);
    const stderr = proc.stderr();
    assert.match(stderr, /3 problem\(s\)/);
    for (const name of ['SWITCHBOARD_LISTEN', 'SWITCHBOARD_DEFAULT_LEASE', 'SWITCHBOARD_LOG_LEVEL']) {
      assert.ok(stderr.includes(name), `stderr names ${name}: ${stderr}`);
    }
    assert.match(stderr, /"nope"/);
    assert.match(stderr, /"1s"/);
    assert.match(stderr, /loud/);
    assert.equal(proc.stdout(), '', 'nothing started, so nothing logged');
    assert.equal(existsSync(dataDir), false, 'no embedded PostgreSQL was started');
  },
);

test(
  'migrate --json against an external database applies every migration, and a second run applies none',
  { timeout: 120_000 },
  async () => {
    const url = await emptyDatabase('serve_migrate_cli');
    const names = (await loadMigrations()).map((m) => m.name);
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const proc = cli(['migrate', '--json'], { SWITCHBOARD_DATABASE_URL: url });
      const { code } = await exitOf(proc);
      assert.equal(code, 0, `migrate exits 0; stderr: ${proc.stderr()}`);
      runs.push(JSON.parse(proc.stdout()) as unknown);
    }
    assert.deepEqual(runs, [
      { applied: names, current: names.at(-1) },
      { applied: [], current: names.at(-1) },
    ]);
  },
);
