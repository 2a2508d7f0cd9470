// A pg_auto_failover formation for the failover scenario (chaos/failover.ts): a monitor
// and two PostgreSQL nodes on free loopback ports, with synchronous replication (the
// formation's default with one standby: the primary's synchronous_standby_names names it,
// so a commit is answered only once the standby has it). Debian's packages:
// postgresql-15-auto-failover and pg-auto-failover-cli; PostgreSQL 15's binaries.
//
// Everything lives in one temp dir under /tmp (mode 0755) that the `postgres` user owns,
// pg_autoctl's own config and state (XDG_*) included, so nothing of the machine's is
// touched. As root, every pg_autoctl runs as `postgres` through `runuser`. Each
// `pg_autoctl run` is a child in a process group of its own, so a node can be killed
// whole (its keeper and its postmaster) with one kill -9.
//
// The monitor's health checks are tightened (a check a second, a node unhealthy after
// 3 s, a demote timeout of 5 s instead of 30 s) so an unplanned failover takes seconds,
// not a minute; docs/design/scale-out.md says what that trades.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const PG_BIN = process.env.CHAOS_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const AUTOCTL = '/usr/bin/pg_autoctl';
const DATABASE = 'switchboard';

/** Why the formation cannot be made here, or null when it can. */
export function failoverUnavailable(): string | null {
  if (!existsSync(AUTOCTL)) {
    return `${AUTOCTL} is missing (apt-get install postgresql-15-auto-failover pg-auto-failover-cli)`;
  }
  if (!existsSync(join(PG_BIN, 'pg_ctl'))) return `${PG_BIN}/pg_ctl is missing (PostgreSQL 15's server binaries)`;
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser') && !existsSync('/usr/bin/runuser')) {
    return 'running as root without runuser to drop to the postgres user';
  }
  return null;
}

export interface NodeState {
  name: string;
  port: number;
  reported: string;
  goal: string;
}

/** Polls (200 ms apart) a step of the set-up may take before the formation is declared broken. */
const SETUP_POLLS = 600;

export class Formation {
  private readonly groups = new Map<string, ChildProcess>();
  readonly ports: { monitor: number; node1: number; node2: number };

  private constructor(
    readonly dir: string,
    ports: number[],
  ) {
    this.ports = { monitor: ports[0]!, node1: ports[1]!, node2: ports[2]! };
  }

  /** Creates the dir (owned by postgres when root) and the monitor; then the two nodes. */
  static async create(
    ports: number[],
    say: (line: string) => void,
    onInterrupt?: (step: () => Promise<void>) => void,
  ): Promise<Formation> {
    const dir = await mkdtemp('/tmp/switchboard-failover-');
    await chmod(dir, 0o755);
    const f = new Formation(dir, ports);
    onInterrupt?.(() => f.stop(false));
    if (process.getuid?.() === 0) {
      const ids = (await run('id', ['-u', 'postgres'])).stdout.trim();
      const gid = (await run('id', ['-g', 'postgres'])).stdout.trim();
      await chown(dir, Number(ids), Number(gid));
    }
    try {
      await f.setUp(say);
    } catch (err) {
      // Nothing half-made left running; the dir stays for its logs.
      await f.stop(true);
      throw new Error(`${(err as Error).message} (pg_auto_failover's logs in ${dir})`, { cause: err });
    }
    return f;
  }

  private async setUp(say: (line: string) => void): Promise<void> {
    for (const sub of ['config', 'share', 'run']) await this.asPostgres('mkdir', ['-p', join(this.dir, sub)]);
    await this.asPostgres('chmod', ['0700', join(this.dir, 'run')]);
    await this.autoctl(
      'create',
      'monitor',
      ...this.pgArgs('monitor', this.ports.monitor),
      '--auth',
      'trust',
      '--no-ssl',
    );
    this.start('monitor');
    await this.untilSql(this.ports.monitor, 'pg_auto_failover', 'SELECT 1', 'the monitor to accept connections');
    const monitor = await this.client(this.ports.monitor, 'pg_auto_failover');
    try {
      for (const [name, value] of [
        ['health_check_period', '1000'],
        ['health_check_timeout', '1000'],
        ['health_check_retry_delay', '500'],
        ['health_check_max_retries', '1'],
        ['node_considered_unhealthy_timeout', '3000'],
        ['primary_demote_timeout', '5000'],
      ]) {
        await monitor.query(`ALTER SYSTEM SET pgautofailover.${name} = ${value}`);
      }
      await monitor.query('SELECT pg_reload_conf()');
    } finally {
      await monitor.end();
    }
    say(`pg_auto_failover monitor on 127.0.0.1:${this.ports.monitor}`);
    for (const node of ['node1', 'node2'] as const) {
      this.start(node, true);
      await this.untilNodes(
        (nodes) =>
          node === 'node1'
            ? nodes.some((n) => n.name === 'node1' && ['single', 'wait_primary', 'primary'].includes(n.reported))
            : nodes.filter((n) => n.reported === n.goal && ['primary', 'secondary'].includes(n.reported)).length === 2,
        node === 'node1' ? 'node1 to become the primary' : 'node2 to become a synchronous secondary',
        // pg_basebackup of node2 waits for a checkpoint on node1: ask for it instead of waiting minutes.
        node === 'node2' ? () => this.checkpoint(this.ports.node1) : undefined,
      );
      say(`${node} up on 127.0.0.1:${this.ports[node]}`);
    }
  }

  /** The multi-host URL of both nodes, read-write wanted. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.ports.node1},127.0.0.1:${this.ports.node2}/${DATABASE}?target_session_attrs=read-write`;
  }

  private env(): NodeJS.ProcessEnv {
    return {
      PATH: `${PG_BIN}:/usr/sbin:/usr/bin:/sbin:/bin`,
      HOME: this.dir,
      XDG_CONFIG_HOME: join(this.dir, 'config'),
      XDG_DATA_HOME: join(this.dir, 'share'),
      XDG_RUNTIME_DIR: join(this.dir, 'run'),
      PG_CONFIG: join(PG_BIN, 'pg_config'),
      LANG: 'C.UTF-8',
    };
  }

  /** [command, args] that run `args` as postgres (root) or as we are. */
  private wrap(command: string, args: string[]): [string, string[]] {
    if (process.getuid?.() !== 0) return [command, args];
    return ['runuser', ['-u', 'postgres', '--', 'env', ...envArgs(this.env()), command, ...args]];
  }

  private async asPostgres(command: string, args: string[]): Promise<string> {
    const [cmd, full] = this.wrap(command, args);
    return (await run(cmd, full, { env: this.env(), cwd: this.dir, maxBuffer: 16 << 20 })).stdout;
  }

  private pgArgs(name: string, port: number): string[] {
    return [
      '--pgdata',
      join(this.dir, name),
      '--pgport',
      String(port),
      '--hostname',
      '127.0.0.1',
      '--pgctl',
      join(PG_BIN, 'pg_ctl'),
    ];
  }

  private autoctl(...args: string[]): Promise<string> {
    return this.asPostgres(AUTOCTL, args);
  }

  private get monitorUri(): string {
    return `postgres://autoctl_node@127.0.0.1:${this.ports.monitor}/pg_auto_failover?sslmode=disable`;
  }

  /** Starts `pg_autoctl run` (the monitor) or `pg_autoctl create postgres … --run` (a node). */
  private start(name: 'monitor' | 'node1' | 'node2', create = false): void {
    const port = this.ports[name];
    const args = create
      ? ['create', 'postgres', ...this.pgArgs(name, port), '--name', name, '--dbname', DATABASE].concat([
          '--monitor',
          this.monitorUri,
          '--auth',
          'trust',
          '--no-ssl',
          '--run',
        ])
      : ['run', '--pgdata', join(this.dir, name)];
    const [cmd, full] = this.wrap(AUTOCTL, args);
    const child = spawn(cmd, full, {
      env: this.env(),
      cwd: this.dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(join(this.dir, `${name}.log`), { flags: 'a' });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.on('error', () => undefined);
    this.groups.set(name, child);
  }

  private client(port: number, database: string): Promise<pg.Client> {
    const c = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${port}/${database}`,
      application_name: 'chaos-formation',
      connectionTimeoutMillis: 2_000,
    });
    c.on('error', () => undefined);
    return c.connect().then(
      () => c,
      async (err: unknown) => {
        await c.end().catch(() => undefined);
        throw err;
      },
    );
  }

  private async untilSql(port: number, database: string, sql: string, what: string): Promise<void> {
    for (let i = 0; i < SETUP_POLLS; i++) {
      try {
        const c = await this.client(port, database);
        await c.query(sql).finally(() => c.end());
        return;
      } catch {
        await sleep(200);
      }
    }
    throw new Error(`gave up waiting for ${what} (logs in ${this.dir})`);
  }

  /** The nodes as the monitor sees them. */
  async nodes(): Promise<NodeState[]> {
    const c = await this.client(this.ports.monitor, 'pg_auto_failover');
    try {
      const { rows } = await c.query<NodeState>(
        `SELECT nodename AS name, nodeport AS port, reportedstate::text AS reported, goalstate::text AS goal
           FROM pgautofailover.node ORDER BY nodeid`,
      );
      return rows;
    } finally {
      await c.end();
    }
  }

  private async untilNodes(ok: (nodes: NodeState[]) => boolean, what: string, each?: () => Promise<void>) {
    let last: NodeState[] = [];
    for (let i = 0; i < SETUP_POLLS; i++) {
      last = await this.nodes().catch(() => last);
      if (ok(last)) return;
      if (each && i % 10 === 5) await each().catch(() => undefined);
      await sleep(200);
    }
    throw new Error(`gave up waiting for ${what}: ${JSON.stringify(last)} (logs in ${this.dir})`);
  }

  private async checkpoint(port: number): Promise<void> {
    const c = await this.client(port, 'postgres');
    await c.query('CHECKPOINT').finally(() => c.end());
  }

  /** The node the monitor holds as primary (reported and assigned), or null in between. */
  async primary(): Promise<'node1' | 'node2' | null> {
    const nodes = await this.nodes();
    const p = nodes.find((n) => ['primary', 'wait_primary', 'single'].includes(n.reported) && n.goal === n.reported);
    return (p?.name as 'node1' | 'node2' | undefined) ?? null;
  }

  /** What the primary's settings say about synchronous replication. */
  async replication(port: number): Promise<{ standbyNames: string; commit: string; syncStandbys: number }> {
    const c = await this.client(port, 'postgres');
    try {
      const { rows } = await c.query<{ names: string; commit: string; sync: number }>(
        `SELECT current_setting('synchronous_standby_names') AS names, current_setting('synchronous_commit') AS commit,
                (SELECT count(*)::int FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')) AS sync`,
      );
      return { standbyNames: rows[0]!.names, commit: rows[0]!.commit, syncStandbys: rows[0]!.sync };
    } finally {
      await c.end();
    }
  }

  /** Waits until the monitor has one primary and one secondary, both settled. */
  untilSettled(what: string): Promise<void> {
    return this.untilNodes(
      (nodes) =>
        nodes.length === 2 &&
        nodes.every((n) => n.reported === n.goal) &&
        nodes.some((n) => n.reported === 'primary') &&
        nodes.some((n) => n.reported === 'secondary'),
      what,
    );
  }

  /** `pg_autoctl perform switchover`: returns when the monitor reports the new primary. */
  async switchover(): Promise<void> {
    await this.autoctl('perform', 'switchover', '--pgdata', join(this.dir, 'monitor'));
  }

  /**
   * kill -9 of the primary's postmaster and of its pg_autoctl (the whole node, as when
   * its machine dies: a keeper left alive would only restart PostgreSQL in place).
   * Returns the node killed and the postmaster's pid.
   */
  async killPrimary(): Promise<{ node: string; pid: number }> {
    const node = await this.primary();
    if (!node) throw new Error('no settled primary to kill');
    const pid = Number((await readFile(join(this.dir, node, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    const group = this.groups.get(node);
    if (group?.pid) process.kill(-group.pid, 'SIGKILL');
    this.groups.delete(node);
    return { node, pid };
  }

  /** Stops every pg_autoctl (and so its PostgreSQL), then removes the dir unless kept. */
  async stop(keep: boolean): Promise<void> {
    for (const [, child] of this.groups) if (child.pid) tryKill(-child.pid, 'SIGTERM');
    for (let i = 0; i < 100 && [...this.groups.values()].some((c) => c.exitCode === null); i++) await sleep(100);
    for (const [, child] of this.groups) if (child.pid) tryKill(-child.pid, 'SIGKILL');
    // A postmaster that outlived its keeper (started by pg_ctl, it may have left the group).
    for (const name of ['node1', 'node2', 'monitor']) {
      const pidFile = join(this.dir, name, 'postmaster.pid');
      const text = await readFile(pidFile, 'utf8').catch(() => '');
      const pid = Number(text.split('\n')[0]);
      if (pid > 0) tryKill(pid, 'SIGKILL');
    }
    this.groups.clear();
    if (!keep) await rm(this.dir, { recursive: true, force: true });
  }

  async writeNote(name: string, text: string): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFile(join(this.dir, name), text);
  }
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}

function envArgs(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${v ?? ''}`);
}
