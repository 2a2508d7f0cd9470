// Finding an endpoint's todos by filter for a person (the board's todos list): newest
// first, keyset-paginated on the primary key. The title test reads todo_titles through its
// trigram index (0022_title_search.sql), so a search costs the rows whose titles match, not
// the backlog; the bulk actions use the same fragment, so "search, then act on all
// matches" acts on what was listed. Clauses are added only for the filters given: an
// `$n IS NULL OR …` around the title test would keep the planner from joining it.

import type { Queryable } from '../db/pool.js';
import type { Todo } from '../domain/todo.js';
import { TODO_COLUMNS } from './todo-sql.js';

/**
 * The title test over alias `t`: `endpoint` and `pattern` are parameter references
 * (`$1`), `pattern` an escaped ILIKE pattern. A semi-join on todo_titles, so the planner
 * can start from the trigram index.
 */
export const titleMatchSql = (endpoint: string, pattern: string) =>
  `t.id IN (SELECT s.id FROM todo_titles s WHERE s.endpoint_id = ${endpoint} AND s.title ILIKE ${pattern})`;

export interface FindTodosArgs {
  endpointId: string;
  queue: string | null;
  state: string | null;
  kind: string | null;
  source: string | null;
  /** Exactly this priority. */
  priority: number | null;
  /** This priority or higher. */
  priorityMin: number | null;
  createdBefore: Date | null;
  createdAfter: Date | null;
  /** An escaped ILIKE pattern over the title. */
  titleLike: string | null;
  /** The last id of the previous page (ids are ULIDs: id order is creation order). */
  before: string | null;
  limit: number;
}

const CLAUSES: [keyof FindTodosArgs, (p: string) => string][] = [
  ['queue', (p) => `t.queue = ${p}::text`],
  ['state', (p) => `t.state = ${p}::text`],
  ['kind', (p) => `t.kind = ${p}::text`],
  ['source', (p) => `t.source = ${p}::text`],
  ['priority', (p) => `t.priority = ${p}::int`],
  ['priorityMin', (p) => `t.priority >= ${p}::int`],
  ['createdBefore', (p) => `t.created_at < ${p}::timestamptz`],
  ['createdAfter', (p) => `t.created_at > ${p}::timestamptz`],
  ['titleLike', (p) => titleMatchSql('$1', `${p}::text`)],
  ['before', (p) => `t.id < ${p}::text`],
];

const COLUMNS = TODO_COLUMNS.split(',')
  .map((c) => `t.${c.trim()}`)
  .join(', ');

/**
 * One page of the endpoint's non-synthetic todos that match, newest first. With a title,
 * the matching ids come from the trigram index first, sorted newest first, and todos is
 * probed in that order until the page is full: the probes stop early instead of visiting
 * every match (the index read and its recheck still cost the matches).
 */
export async function findTodos(db: Queryable, a: FindTodosArgs): Promise<Todo[]> {
  const params: unknown[] = [a.endpointId];
  const where = ['t.endpoint_id = $1', 'NOT t.synthetic'];
  const add = (value: unknown) => `$${params.push(value)}`;
  for (const [key, clause] of CLAUSES) {
    const value = a[key];
    if (value === null || key === 'titleLike' || (key === 'before' && a.titleLike !== null)) continue;
    where.push(clause(add(value)));
  }
  if (a.titleLike === null) {
    const res = await db.query<Todo>(
      `SELECT ${COLUMNS} FROM todos t WHERE ${where.join(' AND ')} ORDER BY t.id DESC LIMIT ${add(a.limit)}`,
      params,
    );
    return res.rows;
  }
  const titled = [`s.endpoint_id = $1`, `s.title ILIKE ${add(a.titleLike)}::text`];
  if (a.before !== null) titled.push(`s.id < ${add(a.before)}::text`);
  const res = await db.query<Todo>(
    `SELECT ${COLUMNS}
       FROM (SELECT s.id FROM todo_titles s WHERE ${titled.join(' AND ')} ORDER BY s.id DESC) m
       CROSS JOIN LATERAL (SELECT * FROM todos t WHERE ${where.join(' AND ')} AND t.id = m.id) t
      ORDER BY m.id DESC LIMIT ${add(a.limit)}`,
    params,
  );
  return res.rows;
}
