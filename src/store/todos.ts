// Todos: create (idempotent within the window), read, list, and the tenant-scoped existence probe that
// tells not_found from conflict. Every statement is scoped by endpoint_id.

import type { Queryable } from '../db/pool.js';
import { planGeneric } from '../db/prepared.js';
import type { Todo, TodoAttempt, TodoState } from '../domain/todo.js';
import { assertTakesWork } from './endpoints.js';
import { findKeyHolder } from './todo-idempotency.js';
import { LIVE_ENDPOINT, NOTIFY_READY, NOTIFY_SCHEDULED, TODO_COLUMNS, tokenHash, withoutNotice } from './todo-sql.js';

export interface InsertTodoArgs {
  endpointId: string;
  id: string;
  queue: string;
  title: string;
  body: string;
  payload: unknown;
  kind: string | null;
  source: string | null;
  createdByHumanId: string | null;
  createdByEndpointId: string | null;
  /** The schedule making it (docs/design/schedules.md), else null. */
  scheduleId?: string | null;
  /** The webhook event making it (docs/design/intake.md), else null. */
  eventId?: string | null;
  idempotencyKey: string | null;
  maxAttempts: number;
  /** -100..100, higher first; default 0. */
  priority?: number;
  /** Unclaimable and unrung before this instant; null, past or now: ready at once. */
  notBefore?: Date | null;
  /** The todo's own retry backoff; null: the server's. */
  retryBackoff?: { baseSeconds: number; maxSeconds: number } | null;
  /** The W3C trace context of the request that made it (docs/design/tracing.md); null: untraced. */
  traceparent?: string | null;
}

/**
 * Inserts a todo, or returns the todo holding the same idempotency key: the live one, or
 * a terminal one changed less than `windowSeconds` ago (store/todo-idempotency.ts). The
 * insert and its notification are one statement, so the notice fires on commit: todo_ready,
 * or for a todo scheduled ahead (ready_at NULL until the promotion pass) todo_scheduled.
 */
export async function insertTodo(
  db: Queryable,
  a: InsertTodoArgs,
  windowSeconds: number,
): Promise<{ todo: Todo; created: boolean }> {
  const params = [
    a.endpointId,
    a.id,
    a.queue,
    a.title,
    a.body,
    a.payload === undefined ? null : JSON.stringify(a.payload),
    a.kind,
    a.source,
    a.createdByHumanId,
    a.createdByEndpointId,
    a.idempotencyKey,
    a.maxAttempts,
    a.priority ?? 0,
    a.notBefore ?? null,
    a.retryBackoff?.baseSeconds ?? null,
    a.retryBackoff?.maxSeconds ?? null,
    a.scheduleId ?? null,
    a.traceparent ?? null,
    a.eventId ?? null,
  ];
  // The lookup comes first: the unique index covers live rows only, so an insert would not
  // stop at a recent terminal holder. A concurrent create can take the key between the
  // lookup and the insert (the insert then does nothing and the next round finds it), or
  // its holder can age out of the window meanwhile (the next round inserts). Three rounds
  // cover any realistic interleaving.
  for (let round = 0; round < 3; round++) {
    if (a.idempotencyKey !== null) {
      const holder = await findKeyHolder(db, a.endpointId, a.idempotencyKey, windowSeconds);
      if (holder) return { todo: holder, created: false };
    }
    const inserted = await db.query<Todo>(
      planGeneric({
        name: 'insert_todo',
        text: `WITH ${LIVE_ENDPOINT}, r AS (
         INSERT INTO todos (endpoint_id, id, queue, title, body, payload, kind, source,
           created_by_human_id, created_by_endpoint_id, idempotency_key, max_attempts,
           priority, not_before, retry_base_seconds, retry_max_seconds, schedule_id, traceparent, event_id, ready_at)
         SELECT $1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12, $13, $14::timestamptz, $15, $16, $17, $18, $19,
           CASE WHEN $14::timestamptz > now() THEN NULL ELSE now() END
           FROM live WHERE $3 = ANY (live.queues)
         ON CONFLICT (endpoint_id, idempotency_key)
           WHERE idempotency_key IS NOT NULL
             AND (state IN ('pending', 'claimed', 'waiting_on_human') OR (state = 'failed' AND next_retry_at IS NOT NULL))
           DO NOTHING
         RETURNING ${TODO_COLUMNS})
       SELECT r.*, CASE WHEN r.not_before > now() THEN ${NOTIFY_SCHEDULED} ELSE ${NOTIFY_READY} END AS notified
         FROM r`,
        values: params,
      }),
    );
    const row = withoutNotice(inserted.rows[0]);
    if (row) return { todo: row, created: true };
    await assertTakesWork(db, a.endpointId, [a.queue]);
  }
  throw new Error('idempotent insert did not settle after 3 rounds');
}

export interface TodoScope {
  endpointId: string;
  /** When set (an agent), only these queues are visible: others answer not_found. */
  queues?: string[] | undefined;
}

export async function getTodo(db: Queryable, scope: TodoScope, id: string): Promise<Todo | null> {
  const res = await db.query<Todo>(
    `SELECT ${TODO_COLUMNS} FROM todos
      WHERE endpoint_id = $1 AND id = $2 AND ($3::text[] IS NULL OR queue = ANY($3::text[]))`,
    [scope.endpointId, id, scope.queues ?? null],
  );
  return res.rows[0] ?? null;
}

/** What a zero-row conditional update needs to classify itself. */
export interface TodoProbe {
  state: TodoState;
  owner_session_id: string | null;
  /**
   * With a holder: the outcome of its latest attempt on the todo (the session's, or the one
   * the lease token names; null while it is open), or undefined when it never held one.
   * Without a holder: undefined.
   */
  my_outcome?: string | null;
  /** With a lease token: whether the attempt it names is the todo's latest. */
  current?: boolean;
}

/** Who an owner verb acts as: the calling session, or the lease token it passed. */
export type Holder = { sessionId: string } | { leaseToken: string };

/**
 * State and owner, and — given the holder — whether it ever held an attempt and how its
 * latest one ended: one read of the todo's key and its attempts' primary key (a todo has
 * few attempts: SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO at most).
 */
export async function probeTodo(
  db: Queryable,
  scope: TodoScope,
  id: string,
  holder?: Holder,
): Promise<TodoProbe | null> {
  const sessionId = holder && 'sessionId' in holder ? holder.sessionId : null;
  const token = holder && 'leaseToken' in holder ? holder.leaseToken : null;
  const res = await db.query<{
    state: TodoState;
    owner_session_id: string | null;
    held: boolean | null;
    my_outcome: string | null;
    current: boolean | null;
  }>(
    `SELECT t.state, t.owner_session_id, mine.seq IS NOT NULL AS held, mine.outcome AS my_outcome,
            mine.seq = t.claims AS current
       FROM todos t
       LEFT JOIN LATERAL (
         SELECT a.seq, a.outcome FROM todo_attempts a
          WHERE a.endpoint_id = t.endpoint_id AND a.todo_id = t.id
            AND (a.session_id = $4::text OR a.lease_token_hash = ${tokenHash('$5::text')})
          ORDER BY a.seq DESC LIMIT 1) mine ON true
      WHERE t.endpoint_id = $1 AND t.id = $2 AND ($3::text[] IS NULL OR t.queue = ANY($3::text[]))`,
    [scope.endpointId, id, scope.queues ?? null, sessionId, token],
  );
  const row = res.rows[0];
  if (!row) return null;
  const probe: TodoProbe = { state: row.state, owner_session_id: row.owner_session_id };
  if (holder !== undefined && row.held) probe.my_outcome = row.my_outcome;
  if (token !== null) probe.current = row.current === true;
  return probe;
}

export interface ListTodosArgs {
  queues: string[] | null;
  state: TodoState | null;
  limit: number;
  /** The last id of the previous page: ids are ULIDs, so id order is creation order. */
  before: string | null;
  includeSynthetic: boolean;
}

/** Newest first, keyset-paginated on the primary key. */
export async function listTodos(db: Queryable, endpointId: string, a: ListTodosArgs): Promise<Todo[]> {
  const res = await db.query<Todo>(
    `SELECT ${TODO_COLUMNS} FROM todos
      WHERE endpoint_id = $1
        AND ($2::text[] IS NULL OR queue = ANY($2::text[]))
        AND ($3::text IS NULL OR state = $3::text)
        AND ($4::text IS NULL OR id < $4::text)
        AND ($5::boolean OR NOT synthetic)
      ORDER BY id DESC
      LIMIT $6`,
    [endpointId, a.queues, a.state, a.before, a.includeSynthetic, a.limit],
  );
  return res.rows;
}

export async function listAttempts(db: Queryable, endpointId: string, todoId: string): Promise<TodoAttempt[]> {
  const res = await db.query<TodoAttempt>(
    `SELECT seq, attempt, session_id, claimed_at, lease_expires_at, ended_at, outcome, summary, summary_truncated,
            artifact
       FROM todo_attempts WHERE endpoint_id = $1 AND todo_id = $2 ORDER BY seq`,
    [endpointId, todoId],
  );
  return res.rows;
}

/**
 * The endpoint of a todo, when that endpoint belongs to this human; else null. One
 * primary-key probe per endpoint of the human: todos has no index on id alone, which
 * every claim and completion would have to write (0011_lean_claim_writes.sql).
 */
export async function findTodoEndpoint(db: Queryable, humanId: string, todoId: string): Promise<string | null> {
  const res = await db.query<{ endpoint_id: string }>(
    `SELECT e.id AS endpoint_id FROM endpoints e
      WHERE e.human_id = $2 AND EXISTS (SELECT 1 FROM todos t WHERE t.endpoint_id = e.id AND t.id = $1)`,
    [todoId, humanId],
  );
  return res.rows[0]?.endpoint_id ?? null;
}
