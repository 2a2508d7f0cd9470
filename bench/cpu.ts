// CPU accounting for the benchmarks, read from /proc: a process's user + system time, and
// the same summed over the PostgreSQL backends connected to the bench database (possible
// only when PostgreSQL runs on this machine; otherwise that figure is left out).

import { readFile } from 'node:fs/promises';
import type { Pool } from '../src/db/pool.js';
import type { ServeChild } from './serve.js';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime: USER_HZ, 100 on Linux. */
const USER_HZ = 100;

/** User + system CPU seconds of a process, or null when it is gone or not visible. */
export async function readCpuSeconds(pid: number): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

/** CPU seconds of each backend connected to the pool's database, by pid; null when not local. */
export async function backendCpu(pool: Pool): Promise<Map<number, number> | null> {
  const res = await pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const seen = new Map<number, number>();
  for (const { pid } of res.rows) {
    const seconds = await readCpuSeconds(pid);
    if (seconds !== null) seen.set(pid, seconds);
  }
  return res.rows.length > 0 && seen.size === 0 ? null : seen;
}

/** Backend CPU seconds used between two readings; a backend that appeared in between counts from zero. */
export function backendCpuUsed(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (!before || !after) return null;
  let used = 0;
  for (const [pid, seconds] of after) used += seconds - (before.get(pid) ?? 0);
  return used;
}

/** A round's rate and the CPU spent per cycle, in ms: this process, the serve child, PostgreSQL. */
export interface Round {
  rate: number;
  benchMs: number;
  serveMs: number;
  postgresMs: number | null;
}

/** Runs `round` and charges it the CPU this process, the serve child and the database's backends used meanwhile. */
export async function charged(
  pool: Pool,
  serve: ServeChild,
  todos: number,
  round: () => Promise<number>,
): Promise<Round> {
  const bench = process.cpuUsage();
  const served = await serve.cpuSeconds();
  const backends = await backendCpu(pool);
  const rate = await round();
  const benchUsed = process.cpuUsage(bench);
  const serveSeconds = (await serve.cpuSeconds()) - served;
  const postgresSeconds = backendCpuUsed(backends, await backendCpu(pool));
  return {
    rate,
    benchMs: (benchUsed.user + benchUsed.system) / 1000 / todos,
    serveMs: (serveSeconds * 1000) / todos,
    postgresMs: postgresSeconds === null ? null : (postgresSeconds * 1000) / todos,
  };
}
