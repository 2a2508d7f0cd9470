// The suite's own world: an embedded PostgreSQL in a temp dir on a free port (never the
// machine's: the suite restarts it) and three `serve` child processes on it, each on a
// fixed port so a killed instance comes back where the clients look for it. The fault
// driver kill -9s a random instance every few seconds and restarts it, terminates random
// backends of the database, and stops and starts PostgreSQL once (same data dir, same
// port). A serve child that exits without being killed is a crash, and is counted.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbedded, type EmbeddedPostgres } from '../src/db/embedded.js';

const CLI = fileURLToPath(new URL('../bin/switchboard.js', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  await once(probe, 'close');
  if (!address || typeof address !== 'object') throw new Error('no port from the probe listener');
  return address.port;
}

/** PostgreSQL settings for the suite: room for three pools, the workers' churn and the suite's own reads. */
const PG_SETTINGS = { max_connections: '200', fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };

export class Database {
  private constructor(
    private pg: EmbeddedPostgres,
    readonly dir: string,
  ) {}

  static async start(dir: string): Promise<Database> {
    return new Database(await startEmbedded({ dataDir: dir, settings: PG_SETTINGS }), dir);
  }

  get url(): string {
    return this.pg.url;
  }

  /** Stops PostgreSQL (fast shutdown: every backend is cut) and starts it again on the same port and data dir. */
  async restart(): Promise<{ downMs: number }> {
    const port = this.pg.port;
    const started = Date.now();
    await this.pg.stop();
    this.pg = await startEmbedded({ dataDir: this.dir, settings: PG_SETTINGS });
    if (this.pg.port !== port) throw new Error(`PostgreSQL came back on port ${this.pg.port}, not ${port}`);
    return { downMs: Date.now() - started };
  }

  stop(): Promise<void> {
    return this.pg.stop();
  }
}

/** The parent's environment without SWITCHBOARD_* (serve refuses variables it does not know). */
function childEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SWITCHBOARD_')) env[key] = value;
  return { ...env, ...vars };
}

export class Instance {
  child: ChildProcess | null = null;
  up = false;
  starts = 0;
  /** Exits we did not cause after the instance was ready: a crash. */
  crashes: string[] = [];
  /** Exits we did not cause while starting (e.g. its migration connection was terminated); it is started again. */
  failedStarts: string[] = [];
  private killing = false;
  private readonly log: WriteStream;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly databaseUrl: () => string,
    private readonly env: Record<string, string>,
    logDir: string,
  ) {
    this.log = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
    this.logPath = join(logDir, `${name}.log`);
  }

  readonly logPath: string;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the child and waits for /readyz; retries a child that dies while starting. */
  async start(): Promise<void> {
    for (let tries = 0; ; tries++) {
      const child = spawn(process.execPath, [CLI, 'serve'], {
        env: childEnv({
          SWITCHBOARD_DATABASE_URL: this.databaseUrl(),
          SWITCHBOARD_LISTEN: `127.0.0.1:${this.port}`,
          SWITCHBOARD_LOG_LEVEL: 'warn',
          SWITCHBOARD_INSTANCE_ID: `${this.name}-${++this.starts}`,
          ...this.env,
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      this.child = child;
      this.killing = false;
      child.stdout?.pipe(this.log, { end: false });
      child.stderr?.pipe(this.log, { end: false });
      let exited = false;
      child.once('exit', (code, signal) => {
        exited = true;
        const wasUp = this.up;
        this.up = false;
        if (!this.killing) {
          const line = `${new Date().toISOString()} ${this.name} (pid ${child.pid}) exited by itself (code ${code}, signal ${signal})`;
          (wasUp ? this.crashes : this.failedStarts).push(line);
        }
      });
      const deadline = Date.now() + 60_000;
      while (!exited && Date.now() < deadline) {
        const status = await fetch(`${this.url}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) {
          this.up = true;
          return;
        }
        await sleep(100);
      }
      this.killing = true;
      child.kill('SIGKILL');
      if (!exited) await once(child, 'exit');
      if (tries >= 5) throw new Error(`${this.name} did not become ready (see ${this.logPath})`);
      await sleep(500);
    }
  }

  /** kill -9. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.killing = true;
    this.up = false;
    child.kill('SIGKILL');
    await once(child, 'exit').catch(() => undefined);
  }

  /** A clean stop at the end (SIGTERM, then SIGKILL after 20 s). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.killing = true;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
    this.up = false;
  }

  closeLog(): void {
    this.log.end();
  }

  /** Lines of the child's log at level error or fatal (levels are logged by name), for the summary. */
  async errorLines(): Promise<string[]> {
    const text = await readFile(this.logPath, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((l) => /"level":"(error|fatal)"/.test(l) || /^(Error|TypeError|RangeError)\b/.test(l));
  }
}

export interface FaultCounts {
  kills: number;
  restarts: number;
  terminated: number;
  pgRestarts: number;
  pgDownMs: number;
}

export interface FaultPlan {
  /** Seconds between kill -9s (each a random instance), drawn uniformly. */
  killEvery: [number, number];
  /** Seconds a killed instance stays down. */
  downFor: [number, number];
  /** Seconds between pg_terminate_backend rounds, each 1–3 backends. */
  terminateEvery: [number, number];
}

/**
 * Runs the faults until stop() is called. `restartDatabaseWhen` is polled: the first time
 * it answers true, PostgreSQL is stopped and started again (kills pause meanwhile).
 */
export class FaultDriver {
  counts: FaultCounts = { kills: 0, restarts: 0, terminated: 0, pgRestarts: 0, pgDownMs: 0 };
  databaseDown = false;
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  log: string[] = [];

  constructor(
    private readonly db: Database,
    private readonly instances: Instance[],
    private readonly plan: FaultPlan,
    private readonly restartDatabaseWhen: () => boolean,
  ) {}

  start(): void {
    this.loops.push(this.killLoop(), this.terminateLoop(), this.databaseLoop());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private note(line: string): void {
    this.log.push(`${new Date().toISOString()} ${line}`);
  }

  private async pause(seconds: number): Promise<void> {
    for (const until = Date.now() + seconds * 1000; Date.now() < until && !this.stopped;) await sleep(100);
  }

  /**
   * Every few seconds, kill -9 a random live instance, as long as another one is up (the
   * clients always have somewhere to go), and bring it back after a short pause. A restart
   * takes seconds on a loaded machine, so restarts run on their own and kills continue.
   */
  private async killLoop(): Promise<void> {
    const restarts = new Set<Promise<void>>();
    while (!this.stopped) {
      await this.pause(between(...this.plan.killEvery));
      if (this.stopped) break;
      if (this.databaseDown) continue;
      const live = this.instances.filter((i) => i.up);
      if (live.length < 2) continue;
      const victim = live[Math.floor(Math.random() * live.length)];
      if (!victim) continue;
      await victim.kill();
      this.counts.kills += 1;
      this.note(`kill -9 ${victim.name}`);
      const restart = this.restart(victim).finally(() => restarts.delete(restart));
      restarts.add(restart);
    }
    await Promise.all(restarts);
  }

  private async restart(victim: Instance): Promise<void> {
    await sleep(between(...this.plan.downFor) * 1000);
    while (this.databaseDown) await sleep(100);
    try {
      await victim.start();
      this.counts.restarts += 1;
      this.note(`restarted ${victim.name}`);
    } catch (err) {
      this.note(`could not restart ${victim.name}: ${(err as Error).message}`);
    }
  }

  private async terminateLoop(): Promise<void> {
    while (!this.stopped) {
      await this.pause(between(...this.plan.terminateEvery));
      if (this.stopped || this.databaseDown) continue;
      const client = new pg.Client({ connectionString: this.db.url, application_name: 'chaos-faults' });
      client.on('error', () => undefined);
      try {
        await client.connect();
        const n = 1 + Math.floor(Math.random() * 3);
        const res = await client.query<{ pid: number; application_name: string; terminated: boolean }>(
          `SELECT pid, application_name, pg_terminate_backend(pid) AS terminated FROM (
             SELECT pid, application_name FROM pg_stat_activity
              WHERE datname = current_database() AND backend_type = 'client backend'
                AND pid <> pg_backend_pid() AND application_name NOT LIKE 'chaos%'
              ORDER BY random() LIMIT $1) victims`,
          [n],
        );
        this.counts.terminated += res.rows.filter((r) => r.terminated).length;
      } catch {
        /* the database is restarting or the backend went first: try again next round */
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  private async databaseLoop(): Promise<void> {
    while (!this.stopped && !this.restartDatabaseWhen()) await sleep(200);
    if (this.stopped) return;
    this.databaseDown = true;
    this.note('stopping PostgreSQL');
    try {
      const { downMs } = await this.db.restart();
      this.counts.pgRestarts += 1;
      this.counts.pgDownMs = downMs;
      this.note(`PostgreSQL back after ${downMs} ms`);
    } finally {
      this.databaseDown = false;
    }
  }
}
