// A `switchboard serve` child process for the benchmarks that measure the server as it
// runs in production: its own process (so a benchmark's clients do not share its event
// loop), started with `node bin/switchboard.js serve` (the compiled dist/, which
// `npm run bench` builds first) on the bench database, ready once /readyz answers 200. Its RSS and CPU time are read from /proc/<pid>. It does not vend
// endpoints or seed data: the benchmark does that on the same database.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { readCpuSeconds } from './cpu.js';

const CLI = fileURLToPath(new URL('../bin/switchboard.js', import.meta.url));
/** The first start reads dist/ and node_modules from a cold cache; 60 s covers that on a busy machine. */
const READY_TIMEOUT_MS = 60_000;
/** A clean shutdown closes every stream and the pool; past this the child is killed. */
const STOP_TIMEOUT_MS = 20_000;

export interface ServeChild {
  url: string;
  pid: number;
  /** VmRSS of the child in KiB. */
  rssKiB(): Promise<number>;
  /** User + system CPU time the child has used so far, in seconds. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

/** A free loopback port: the child logs its address only at info level, so it is told one. */
async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  await once(probe, 'close');
  if (!address || typeof address !== 'object') throw new Error('no port from the probe listener');
  return address.port;
}

/** The parent's environment without SWITCHBOARD_* (serve refuses variables it does not know). */
function childEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SWITCHBOARD_')) env[key] = value;
  return { ...env, ...vars };
}

async function waitReady(url: string, exited: Promise<void>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let gone = false;
  void exited.then(() => (gone = true));
  while (Date.now() < deadline && !gone) {
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(gone ? 'serve exited before it was ready' : `serve not ready within ${READY_TIMEOUT_MS} ms`);
}

export async function readRssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/**
 * Starts serve on `databaseUrl` (already migrated) with SWITCHBOARD_LOG_LEVEL=warn; null
 * leaves SWITCHBOARD_DATABASE_URL unset, so serve runs its embedded PostgreSQL (pass
 * SWITCHBOARD_DATA_DIR in `vars`).
 */
export async function startServe(
  databaseUrl: string | null,
  vars: Record<string, string> = {},
  extraNodeArgs: string[] = [],
): Promise<ServeChild> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // BENCH_SERVE_NODE_ARGS: extra node flags for the child, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const nodeArgs = [...(process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean), ...extraNodeArgs];
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve'], {
    env: childEnv({
      ...(databaseUrl === null ? {} : { SWITCHBOARD_DATABASE_URL: databaseUrl }),
      SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
      SWITCHBOARD_LOG_LEVEL: 'warn',
      // The benches drive one endpoint far past what an agent fleet sends (thousands of
      // calls a second, 10,000 sessions): /mcp's per-credential limits are what they do
      // not measure, so they are raised out of the way; a bench may set its own.
      SWITCHBOARD_MCP_RATE: '1000000',
      SWITCHBOARD_MCP_BURST: '1000000',
      SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT: '100000',
      // The bulk bench leaves its todos in place, round after round, on one endpoint.
      SWITCHBOARD_QUOTA_LIVE_TODOS: '100000000',
      ...vars,
    }),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // Settles when the child is gone, however it went (an 'error' event included).
  const exited: Promise<void> = once(child, 'exit').then(
    () => undefined,
    () => undefined,
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('serve did not start');
  try {
    await waitReady(url, exited);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    url,
    pid,
    rssKiB: () => readRssKiB(pid),
    cpuSeconds: async () => (await readCpuSeconds(pid)) ?? NaN,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
