// The owner's verbs for many calls at once (docs/design/coalescing.md, "Settles"): one
// autocommit statement per verb over arrays, one element per call. The statements are
// ./settles.ts's, over the rows of `i` (the arrays unnested, numbered by `ord`) instead
// of parameters: each row gets the same ownership check, update, attempt close and
// notice as a single call, and RETURNING carries `ord`, so each caller gets its own row
// or null, in input order, whatever order the rows come back in. Every row names its own
// endpoint, so one statement serves calls of any endpoints.
//
// Two inputs naming one todo race as two single calls would: the update joins the todo
// to both, PostgreSQL updates a row once per statement, so the first input that holds
// the claim wins and the other matches nothing (null: the use case classifies it as a
// lost race, as today). An input that does not hold the claim never matches, so it
// cannot take the todo from one that does.

import type { Queryable } from '../db/pool.js';
import type { AttemptNote } from '../domain/attempts.js';
import type { Backoff } from '../domain/backoff.js';
import { withoutNotice } from './todo-sql.js';
import {
  completeSql,
  failSql,
  heartbeatSql,
  noteSetOf,
  releaseSql,
  retryAtSql,
  type BeatTodo,
  type HolderSql,
  type OwnedArgs,
  type SettleShape,
  type SettledTodo,
} from './settles.js';

/** An input column: its name in `i`, its SQL element type, and its value for one call. */
type Column<A> = readonly [name: string, type: string, value: (a: A) => unknown];

const OWNED: Column<OwnedArgs>[] = [
  ['endpoint_id', 'text', (a) => a.endpointId],
  ['id', 'text', (a) => a.id],
  ['session_id', 'text', (a) => a.sessionId],
  ['tok', 'text', (a) => a.leaseToken ?? null],
];
const NOTE: Column<Partial<AttemptNote>>[] = [
  ['summary', 'text', (a) => a.summary ?? null],
  ['summary_truncated', 'boolean', (a) => a.summaryTruncated ?? false],
  ['artifact', 'text', (a) => a.artifact ?? null],
];
const HOLDER: HolderSql = { endpoint: 'i.endpoint_id', id: 'i.id', session: 'i.session_id', tok: 'i.tok' };
const NOTE_SET = noteSetOf('i.summary', 'i.summary_truncated', 'i.artifact');
const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/**
 * The batch's shape: `i`, the arrays ($1, $2, … in `columns` order) unnested with their
 * ordinal, materialized so that `extra` (fail's random() draw) is drawn once per input.
 */
function shapeOf(columns: readonly Column<never>[], extra = ''): SettleShape {
  const arrays = columns.map(([, type], k) => `$${k + 1}::${type}[]`).join(', ');
  const names = columns.map(([name]) => name).join(', ');
  return {
    with: `i AS MATERIALIZED (SELECT u.*${extra} FROM unnest(${arrays}) WITH ORDINALITY AS u(${names}, ord)),\n     `,
    from: ['i'],
    keys: 't.endpoint_id = ANY ($1::text[]) AND t.id = ANY ($2::text[]) AND ',
    ord: 'i.ord::int AS ord, ',
    closeFrom: 'r JOIN i ON i.ord = r.ord',
    claimer: '(SELECT c.session_id FROM closed c WHERE c.ord = r.ord) AS claimer',
  };
}

/** The arrays of a batch: one per column, one element per input. */
function arraysOf<A>(columns: readonly Column<A>[], inputs: A[]): unknown[][] {
  return columns.map(([, , value]) => inputs.map(value));
}

/** Rows by their `ord` (1-based input position), as one answer per input: null for an input no row answered. */
function inInputOrder<T>(count: number, rows: (T & { ord?: number })[]): (T | null)[] {
  const answers: (T | null)[] = new Array<T | null>(count).fill(null);
  for (const row of rows) {
    const ord = row.ord as number;
    delete row.ord;
    answers[ord - 1] = row;
  }
  return answers;
}

type HeartbeatArgs = OwnedArgs & { leaseSeconds: number };
const HEARTBEAT_COLUMNS: Column<HeartbeatArgs>[] = [...OWNED, ['lease_seconds', 'float8', (a) => a.leaseSeconds]];
const HEARTBEAT_MANY = heartbeatSql(shapeOf(HEARTBEAT_COLUMNS), { holder: HOLDER, lease: 'i.lease_seconds' });

export async function heartbeatMany(db: Queryable, inputs: HeartbeatArgs[]): Promise<(BeatTodo | null)[]> {
  const res = await db.query<BeatTodo>({
    name: 'heartbeat_many',
    text: HEARTBEAT_MANY,
    values: arraysOf(HEARTBEAT_COLUMNS, inputs),
  });
  return inInputOrder(inputs.length, res.rows);
}

type CompleteArgs = OwnedArgs & Partial<AttemptNote> & { result: unknown };
const COMPLETE_COLUMNS: Column<CompleteArgs>[] = [...OWNED, ...NOTE, ['result', 'text', (a) => json(a.result)]];
const COMPLETE_MANY = completeSql(shapeOf(COMPLETE_COLUMNS), {
  holder: HOLDER,
  result: 'i.result::jsonb',
  note: NOTE_SET,
});

export async function completeMany(db: Queryable, inputs: CompleteArgs[]): Promise<(SettledTodo | null)[]> {
  const res = await db.query<SettledTodo>({
    name: 'complete_many',
    text: COMPLETE_MANY,
    values: arraysOf(COMPLETE_COLUMNS, inputs),
  });
  return inInputOrder(inputs.length, res.rows);
}

type FailArgs = OwnedArgs &
  Partial<AttemptNote> & { error: string | null; result: unknown; backoff: Backoff; jitter: number; retry?: boolean };
const FAIL_COLUMNS: Column<FailArgs>[] = [
  ...OWNED,
  ...NOTE,
  ['error', 'text', (a) => a.error],
  ['result', 'text', (a) => json(a.result)],
  ['base_seconds', 'int', (a) => a.backoff.baseSeconds],
  ['max_seconds', 'int', (a) => a.backoff.maxSeconds],
  ['jitter', 'float8', (a) => a.jitter],
  ['retry', 'boolean', (a) => a.retry ?? true],
];
const FAIL_MANY = failSql(shapeOf(FAIL_COLUMNS, ', random() AS draw'), {
  holder: HOLDER,
  error: 'i.error',
  result: 'i.result::jsonb',
  retryAt: retryAtSql({
    retry: 'i.retry',
    base: 'i.base_seconds',
    max: 'i.max_seconds',
    jitter: 'i.jitter',
    draw: 'i.draw',
  }),
  note: NOTE_SET,
  from: [],
});

/** As fail() in ./settles.ts for each input: the jitter is drawn per input. */
export async function failMany(db: Queryable, inputs: FailArgs[]): Promise<(SettledTodo | null)[]> {
  const res = await db.query<SettledTodo>({
    name: 'fail_many',
    text: FAIL_MANY,
    values: arraysOf(FAIL_COLUMNS, inputs),
  });
  return inInputOrder(inputs.length, res.rows);
}

type ReleaseArgs = OwnedArgs & Partial<AttemptNote>;
const RELEASE_COLUMNS: Column<ReleaseArgs>[] = [...OWNED, ...NOTE];
const RELEASE_MANY = releaseSql(shapeOf(RELEASE_COLUMNS), { holder: HOLDER, note: NOTE_SET });

/** As release() in ./settles.ts for each input: one todo_ready per released row. */
export async function releaseMany(db: Queryable, inputs: ReleaseArgs[]): Promise<(SettledTodo | null)[]> {
  const res = await db.query<SettledTodo & { notified: unknown }>({
    name: 'release_many',
    text: RELEASE_MANY,
    values: arraysOf(RELEASE_COLUMNS, inputs),
  });
  return inInputOrder(inputs.length, res.rows).map((row) => withoutNotice(row ?? undefined));
}
