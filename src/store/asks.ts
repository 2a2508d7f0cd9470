// The statements of asking a human (docs/design/ask-human.md; 0041_ask_human.sql): park a
// claimed todo on a question, answer it, time it out, and the reads of open and ended
// questions. Each transition is one statement that locks the todo row first and the
// question after, the order cancel (todo-operator.ts) takes too, so an answer, a timeout
// and a cancel racing on one todo serialise on its row and exactly one of them acts.

import type { Queryable } from '../db/pool.js';
import type { OpenAsk, TodoAnswer } from '../domain/asks.js';
import type { AttemptNote } from '../domain/attempts.js';
import type { Todo } from '../domain/todo.js';
import {
  CLAIMER,
  RUN_SECONDS,
  TRACEPARENT,
  UNDER_POLICY,
  noteSet,
  noteValues,
  owned,
  type OwnedArgs,
} from './settles.js';
import { NOTIFY_BOARD, NOTIFY_READY, TODO_SUMMARY_COLUMNS, closeAttemptSql, todoColumnsOf } from './todo-sql.js';
import type { SettledTodo } from './settles.js';

const SUMMARY = todoColumnsOf('t', TODO_SUMMARY_COLUMNS);
const COLUMNS = todoColumnsOf('t');

/** How many ended questions a claim and get_todo answer at most, the newest. */
export const ANSWERS_SHOWN = 20;

/**
 * SQL: the ended (answered or timed out) questions of todo (`endpoint`, `id`), oldest
 * first, as jsonb TodoAnswer values: at most ANSWERS_SHOWN, the newest. A primary-key
 * prefix read of todo_asks.
 */
export const answersOf = (endpoint: string, id: string) => `(SELECT coalesce(jsonb_agg(
      jsonb_strip_nulls(jsonb_build_object('question', q.question, 'choices', to_jsonb(q.choices),
        'text', q.answer_text, 'choice', q.answer_choice, 'at', q.ended_at,
        'timed_out', CASE WHEN q.outcome = 'timed_out' THEN true END)) || jsonb_build_object('by', q.answered_by)
      ORDER BY q.seq), '[]'::jsonb)
    FROM (SELECT * FROM todo_asks q WHERE q.endpoint_id = ${endpoint} AND q.todo_id = ${id}
            AND q.outcome IN ('answered', 'timed_out') ORDER BY q.seq DESC LIMIT ${ANSWERS_SHOWN}) q)`;

/** SQL: the question attempt `p` (an `asked` attempt) asked, with how it ended, or null. */
export const askOfAttempt = (p: string) => `(SELECT jsonb_strip_nulls(jsonb_build_object('question', q.question,
      'choices', to_jsonb(q.choices), 'text', q.answer_text, 'choice', q.answer_choice, 'at', q.ended_at,
      'timed_out', CASE WHEN q.outcome = 'timed_out' THEN true END, 'outcome', q.outcome))
      || jsonb_build_object('by', q.answered_by)
    FROM todo_asks q WHERE q.endpoint_id = ${p}.endpoint_id AND q.todo_id = ${p}.todo_id AND q.seq = ${p}.seq)`;

/** A parked todo's row: the settle columns, and when the question was asked and expires. */
export type AskedTodo = SettledTodo & { asked_at: Date; expires_at: Date };

// The holder asks: the todo leaves the claim (no owner, no lease, no ready_at: no claim
// path, reaper or doorbell pass reads it), its attempt closes as `asked` with the note,
// and the question opens, keyed by that attempt. The asking attempt is given back
// (attempt - 1): a question is not a failed try, and asking must not dead-letter work.
const ASK = `WITH r AS (
       UPDATE todos t SET state = 'waiting_on_human', owner_session_id = NULL, lease_expires_at = NULL,
         ready_at = NULL, next_retry_at = NULL, attempt = greatest(t.attempt - 1, 0), updated_at = now()
       WHERE ${owned('$4')}
       RETURNING ${SUMMARY}, ${UNDER_POLICY}, ${RUN_SECONDS}, ${TRACEPARENT}, t.priority),
     closed AS (${closeAttemptSql('r', 'asked', noteSet(8))} RETURNING a.session_id),
     asked AS (
       INSERT INTO todo_asks (endpoint_id, todo_id, seq, question, choices, expires_at, priority_before)
       SELECT r.endpoint_id, r.id, r.claims, $5, $6::text[], now() + make_interval(secs => $7), r.priority FROM r
       RETURNING asked_at, expires_at)
     SELECT r.*, ${CLAIMER}, asked.asked_at, asked.expires_at, ${NOTIFY_BOARD} AS notified FROM r, asked`;

export async function askHuman(
  db: Queryable,
  a: OwnedArgs & Partial<AttemptNote> & { question: string; choices: string[] | null; timeoutSeconds: number },
): Promise<AskedTodo | null> {
  const res = await db.query<AskedTodo & { priority?: number; notified?: unknown }>({
    name: 'ask_human',
    text: ASK,
    values: [
      a.endpointId,
      a.id,
      a.sessionId,
      a.leaseToken ?? null,
      a.question,
      a.choices,
      a.timeoutSeconds,
      ...noteValues(a),
    ],
  });
  const row = res.rows[0];
  if (!row) return null;
  delete row.notified;
  delete row.priority;
  return row;
}

/**
 * Back to pending, first in its queue (docs/design/ask-human.md, "Back in line"): the top
 * priority, ready now, rung afresh (its ring counter restarts) and announced with
 * todo_ready, which wakes long-polls and doorbells on every instance. Over CTE `q`, the
 * questions just closed (endpoint_id, todo_id).
 */
const RETURN_TO_QUEUE = (priority: string) => `UPDATE todos t SET state = 'pending', priority = ${priority},
         ready_at = now(), ring_attempts = 0, last_ringed_at = NULL, updated_at = now()
       FROM q WHERE t.endpoint_id = q.endpoint_id AND t.id = q.todo_id AND t.state = 'waiting_on_human'`;

/** The open question of a waiting todo of the endpoint, or null. */
export async function openAsk(db: Queryable, endpointId: string, id: string): Promise<OpenAsk | null> {
  const res = await db.query<OpenAsk>(
    `SELECT q.endpoint_id, q.todo_id, q.question, q.choices, q.asked_at, q.expires_at
       FROM todo_asks q JOIN todos t ON t.endpoint_id = q.endpoint_id AND t.id = q.todo_id
      WHERE q.endpoint_id = $1 AND q.todo_id = $2 AND q.ended_at IS NULL AND t.state = 'waiting_on_human'`,
    [endpointId, id],
  );
  return res.rows[0] ?? null;
}

/** An answered todo: its columns, and when its question was asked (for the latency histogram). */
export type AnsweredTodo = Todo & { asked_at: Date; answered_at: Date };

/**
 * Answers the todo's open question and returns it to its queue, or null when it is not
 * waiting (any more): the todo row is locked first, so of two answers, or an answer and a
 * timeout or cancel, the later one finds it no longer waiting.
 */
export async function answerAsk(
  db: Queryable,
  a: {
    endpointId: string;
    id: string;
    text: string | null;
    choice: number | null;
    humanId: string | null;
    by: string;
    priority: number;
  },
): Promise<AnsweredTodo | null> {
  const res = await db.query<AnsweredTodo & { notified?: unknown }>(
    `WITH w AS (
       SELECT t.endpoint_id, t.id FROM todos t
        WHERE t.endpoint_id = $1 AND t.id = $2 AND t.state = 'waiting_on_human' FOR UPDATE),
     q AS (
       UPDATE todo_asks q SET ended_at = now(), outcome = 'answered', answer_text = $3, answer_choice = $4,
         answered_by_human_id = $5, answered_by = $6
       FROM w WHERE q.endpoint_id = w.endpoint_id AND q.todo_id = w.id AND q.ended_at IS NULL
       RETURNING q.endpoint_id, q.todo_id, q.asked_at, q.ended_at),
     r AS (${RETURN_TO_QUEUE('$7::smallint')} RETURNING ${COLUMNS})
     SELECT r.*, q.asked_at, q.ended_at AS answered_at, ${NOTIFY_READY} AS notified
       FROM r JOIN q ON q.endpoint_id = r.endpoint_id AND q.todo_id = r.id`,
    [a.endpointId, a.id, a.text, a.choice, a.humanId, a.by, a.priority],
  );
  const row = res.rows[0];
  if (!row) return null;
  delete row.notified;
  return row;
}

/** A question the sweep timed out. */
export interface TimedOut {
  endpoint_id: string;
  todo_id: string;
  queue: string;
  asked_at: Date;
}

/**
 * Questions past their expiry → timed out, their todos back in their queues like an
 * answer (RETURN_TO_QUEUE). The todo rows are locked first, SKIP LOCKED: a todo an
 * answer or a cancel holds is left to it, and re-read after (its state is no longer
 * waiting_on_human, so the sweep passes it by for good).
 */
export async function timeOutAsks(db: Queryable, a: { limit: number; priority: number }): Promise<TimedOut[]> {
  const res = await db.query<TimedOut>(
    `WITH due AS (
       SELECT t.endpoint_id, t.id FROM todo_asks q
         JOIN todos t ON t.endpoint_id = q.endpoint_id AND t.id = q.todo_id
        WHERE q.ended_at IS NULL AND q.expires_at <= now() AND t.state = 'waiting_on_human'
        ORDER BY q.expires_at LIMIT $1 FOR UPDATE OF t SKIP LOCKED),
     q AS (
       UPDATE todo_asks q SET ended_at = now(), outcome = 'timed_out'
       FROM due WHERE q.endpoint_id = due.endpoint_id AND q.todo_id = due.id AND q.ended_at IS NULL
       RETURNING q.endpoint_id, q.todo_id, q.asked_at),
     r AS (${RETURN_TO_QUEUE('$2::smallint')} RETURNING t.endpoint_id, t.id, t.queue),
     notified AS (SELECT ${NOTIFY_READY} FROM (SELECT DISTINCT endpoint_id, queue FROM r) r)
     SELECT r.endpoint_id, r.id AS todo_id, r.queue, q.asked_at, (SELECT count(*) FROM notified) AS notices
       FROM r JOIN q ON q.endpoint_id = r.endpoint_id AND q.todo_id = r.id`,
    [a.limit, a.priority],
  );
  return res.rows.map(({ endpoint_id, todo_id, queue, asked_at }) => ({ endpoint_id, todo_id, queue, asked_at }));
}

/** The open questions of these todos of the endpoint (the `waiting_on_human` reason reads them). */
export async function openAsks(db: Queryable, endpointId: string, ids: string[]): Promise<OpenAsk[]> {
  const res = await db.query<OpenAsk>(
    `SELECT q.endpoint_id, q.todo_id, q.question, q.choices, q.asked_at, q.expires_at FROM todo_asks q
      WHERE q.endpoint_id = $1 AND q.todo_id = ANY($2::text[]) AND q.ended_at IS NULL`,
    [endpointId, ids],
  );
  return res.rows;
}

/** The ended questions of one todo, oldest first (answersOf). */
export async function todoAnswers(db: Queryable, endpointId: string, id: string): Promise<TodoAnswer[]> {
  const res = await db.query<{ answers: TodoAnswer[] }>(`SELECT ${answersOf('$1', '$2')} AS answers`, [endpointId, id]);
  return res.rows[0]?.answers ?? [];
}

/** A todo waiting on its owner, for the "Needs you" view. */
export type WaitingTodo = OpenAsk & { endpoint_slug: string; queue: string; title: string };

/** The human's todos waiting on an answer, oldest question first, at most `limit`. */
export async function waitingForHuman(db: Queryable, humanId: string, limit: number): Promise<WaitingTodo[]> {
  const res = await db.query<WaitingTodo>(
    `SELECT q.endpoint_id, q.todo_id, q.question, q.choices, q.asked_at, q.expires_at,
            e.slug AS endpoint_slug, t.queue, t.title
       FROM endpoints e
       JOIN todos t ON t.endpoint_id = e.id AND t.state = 'waiting_on_human'
       JOIN todo_asks q ON q.endpoint_id = t.endpoint_id AND q.todo_id = t.id AND q.ended_at IS NULL
      WHERE e.human_id = $1
      ORDER BY q.asked_at, q.todo_id LIMIT $2`,
    [humanId, limit],
  );
  return res.rows;
}

/** SQL: closes the open question of each todo in CTE `src` (endpoint_id, id) as canceled. */
export const cancelAskSql = (src: string) => `UPDATE todo_asks q SET ended_at = now(), outcome = 'canceled'
    FROM ${src} WHERE q.endpoint_id = ${src}.endpoint_id AND q.todo_id = ${src}.id AND q.ended_at IS NULL`;
