// Throwaway PostgreSQL servers for the failover and pooler tests (and chaos/failover.ts):
// a primary made with initdb, a streaming standby made from it with pg_basebackup -R,
// started, promoted and stopped with pg_ctl, each in a temp directory on its own loopback
// port. As root, every binary runs as the `postgres` user (PostgreSQL refuses root).
// `missingBinaries()` says why a test must skip; nothing here installs anything.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PG_BIN = process.env.SWITCHBOARD_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const asRoot = process.getuid?.() === 0;

/** Why local servers cannot be made here, or null when they can. */
export function missingBinaries(extra: string[] = []): string | null {
  for (const name of ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres']) {
    if (!existsSync(join(PG_BIN, name))) return `${join(PG_BIN, name)} is missing (set SWITCHBOARD_TEST_PG_BIN)`;
  }
  for (const path of extra) if (!existsSync(path)) return `${path} is missing`;
  return null;
}

/** Runs a binary, as the postgres user when we are root. */
export async function runAsPostgres(file: string, args: string[], timeoutMs = 60_000): Promise<string> {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  try {
    const { stdout } = await run(cmd, argv, { timeout: timeoutMs });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${e.stderr || e.message}`, { cause: err });
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The postgres user's uid and gid when we are root (spawn a server as it); null otherwise. */
export async function postgresIds(): Promise<{ uid: number; gid: number } | null> {
  if (!asRoot) return null;
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** A directory the postgres user owns, under a world-enterable temp dir. */
export async function makeScratch(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  const ids = await postgresIds();
  if (ids) await chown(dir, ids.uid, ids.gid);
  return dir;
}

export class LocalServer {
  constructor(
    readonly dataDir: string,
    readonly port: number,
    private readonly socketDir: string,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    const opts = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.socketDir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    await runAsPostgres(join(PG_BIN, 'pg_ctl'), [
      '-D',
      this.dataDir,
      '-l',
      `${this.dataDir}.log`,
      '-o',
      opts,
      '-w',
      'start',
    ]);
  }

  /** `fast` lets clients go cleanly; `immediate` is a crash (kill -9 of the postmaster's children). */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await runAsPostgres(join(PG_BIN, 'pg_ctl'), ['-D', this.dataDir, '-m', mode, '-w', 'stop']).catch(() => undefined);
  }

  async promote(): Promise<void> {
    await runAsPostgres(join(PG_BIN, 'pg_ctl'), ['-D', this.dataDir, '-w', 'promote']);
  }
}

/** A primary and a streaming standby of it, both running; `dispose` stops both and removes the files. */
export async function primaryAndStandby(): Promise<{
  primary: LocalServer;
  standby: LocalServer;
  dispose: () => Promise<void>;
}> {
  const scratch = await makeScratch('sb-failover-');
  const [pPort, sPort] = [await freePort(), await freePort()];
  const primary = new LocalServer(join(scratch, 'primary'), pPort, scratch);
  const standby = new LocalServer(join(scratch, 'standby'), sPort, scratch);
  const dispose = async () => {
    await Promise.all([primary.stop('immediate'), standby.stop('immediate')]);
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    await runAsPostgres(join(PG_BIN, 'initdb'), ['-D', primary.dataDir, '-U', 'postgres', '-A', 'trust', '-N']);
    await primary.start();
    await runAsPostgres(join(PG_BIN, 'pg_basebackup'), [
      ...['-h', '127.0.0.1', '-p', String(pPort), '-U', 'postgres'],
      ...['-D', standby.dataDir, '-R', '-X', 'stream', '-c', 'fast'],
    ]);
    await standby.start();
    return { primary, standby, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
