// The pool's share for statements planned once (docs/design/coalescing.md, "Planning"):
// createPool (./pool.ts) gives the named statements marked generic (./prepared.ts) their
// own connections, which plan cached statements generically, and the rest of the pool
// everything else.

import type pg from 'pg';
import { isPlannedGeneric } from './prepared.js';

type QueryFn = (...args: unknown[]) => unknown;

/** The server's share of its pool for named statements: half, rounded down, at least one. */
export function namedShareOf(max: number): number {
  return Math.max(1, Math.floor(max / 2));
}

/** Run on each new connection of the named share before its first checkout. */
export const GENERIC_PLANS = 'SET plan_cache_mode = force_generic_plan';

/**
 * Sends the named statements marked generic (./prepared.ts) run on `pool` itself (not on a
 * checked-out client: a transaction keeps its connection) to `generic`, whose connections
 * plan cached statements generically (plan_cache_mode = force_generic_plan): the create,
 * ring, notify-hook and batched claim statements, whose plans do not depend on their
 * values. PostgreSQL's
 * own choice (five custom plans, then generic only while its estimate is no worse) kept
 * re-planning them on a growing table, and planning cost more than running
 * (docs/design/coalescing.md, "Planning"). Every other statement keeps PostgreSQL's choice
 * on the other connections. Ending the pool ends both; poolCounts counts both.
 */
export function routeNamedStatements(pool: pg.Pool, generic: pg.Pool): void {
  const query = pool.query.bind(pool) as QueryFn;
  (pool as { query: QueryFn }).query = (...args: unknown[]) =>
    isPlannedGeneric(args[0]) ? (generic.query as QueryFn)(...args) : query(...args);
  const end = pool.end.bind(pool) as QueryFn;
  (pool as { end: QueryFn }).end = async (...args: unknown[]) => {
    await Promise.all([generic.end(), end(...args)]);
  };
  generics.set(pool, generic);
}

const generics = new WeakMap<pg.Pool, pg.Pool>();

/** The pool's connection counts, its share for named statements included. */
export function poolCounts(pool: pg.Pool): { total: number; idle: number; waiting: number } {
  const both = [pool, generics.get(pool)].filter((p): p is pg.Pool => p !== undefined);
  const sum = (pick: (p: pg.Pool) => number) => both.reduce((n, p) => n + pick(p), 0);
  return { total: sum((p) => p.totalCount), idle: sum((p) => p.idleCount), waiting: sum((p) => p.waitingCount) };
}
