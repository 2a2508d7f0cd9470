// The claim statements: claim and claim_next, each one statement (data-modifying CTEs)
// that picks, admits, claims, opens the attempt with its lease token and acknowledges the
// rings; the owner verbs that end a claim are ./settles.ts (re-exported here). A null or
// empty result means the statement matched nothing; the caller classifies it.

import type { Queryable } from '../db/pool.js';
import type { AdmitAnswer } from '../domain/admission.js';
import { DEFAULT_ATTEMPTS_KEPT } from '../domain/attempts.js';
import type { Todo } from '../domain/todo.js';
import type { TodoAnswer } from '../domain/asks.js';
import { answersOf, askOfAttempt } from './asks.js';
import { CLAIMABLE, CLAIM_RANK, closeAttemptSql, todoColumnsOf, tokenHash } from './todo-sql.js';
import type { RingOutcome } from './doorbell-rings.js';

const COLUMNS = todoColumnsOf('t');

export interface ClaimArgs {
  endpointId: string;
  queues: string[];
  sessionId: string;
  leaseSeconds: number;
  /** Attempts kept per todo (SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO): the claim prunes older ended ones. */
  keepAttempts?: number;
}

/**
 * Claims the row chosen by `pick` (a CTE yielding at most one locked endpoint_id, id,
 * claims, queue, ready_at, given the admission condition to AND into its WHERE): closes a
 * lapsed attempt (takeover), marks the row claimed, opens a new attempt. The `claimed` CTE reads
 * `taken_over`, which runs `closed` before `opened` inserts, so the one-open-attempt
 * index never sees two open rows.
 *
 * Admission (docs/design/admission.md). `probe`: the pick carries one more condition,
 * that no requested queue has a policy: one indexed miss on admission_policies, no lock.
 * None (a queue without a policy): the pick and claim are the statement as it was before
 * admission, with one more result column (`admission`, null). Any: nothing is picked or
 * locked, and each policy comes back as a row whose `admission` is the policy (todo
 * columns null) for the admission path. `admit`: that path's statement, where
 * admission_admit() (0005_admission.sql) locks the picked queue's policy after the todo,
 * decides, charges, and gives the instant the claim is stamped with; `admission` is its
 * answer, with the picked queue when it refused (todo columns null).
 *
 * The no-policy answer is deliberately as narrow as before admission: every column a
 * client library parses costs it on each claim, so the admission data rides in one
 * jsonb column that is null on that path.
 */
export function claimSql(pick: (gate: string) => string, admission: 'probe' | 'admit', keep: string): string {
  const gate =
    admission === 'probe'
      ? `pol AS (SELECT to_jsonb(p) || jsonb_build_object('probed_at', clock_timestamp()) AS policy
               FROM admission_policies p WHERE p.endpoint_id = $1 AND p.queue = ANY($2::text[])),
    free AS (${pick('NOT EXISTS (SELECT 1 FROM pol)')})`
      : `pick AS (${pick('($5::text IS NULL OR t.id = $5::text)')}),
    adm AS (SELECT a.* FROM pick, admission_admit(pick.endpoint_id, pick.queue, pick.id, $6::text[],
                 $7::timestamptz[], $8::timestamptz[], $9::timestamptz[]) a),
    free AS (SELECT pick.*, adm.o_at AS at FROM pick, adm WHERE adm.o_admitted)`;
  const at = admission === 'probe' ? 'now()' : 'free.at';
  const held =
    admission === 'probe'
      ? `SELECT ${NULL_TODO}, pol.policy, NULL, NULL FROM pol`
      : `SELECT ${NULL_TODO}, to_jsonb(adm) || jsonb_build_object('picked_queue', pick.queue), NULL, NULL FROM pick, adm
          WHERE NOT adm.o_admitted`;
  const admitted = admission === 'probe' ? 'NULL::jsonb' : '(SELECT to_jsonb(adm) FROM adm)';
  return `WITH ${gate},
    closed AS (${closeAttemptSql('free', 'lease_expired')} RETURNING a.seq),
    claimed AS (
      UPDATE todos t SET
        state = 'claimed', owner_session_id = $3, attempt = t.attempt + 1, claims = t.claims + 1,
        lease_expires_at = ${at} + make_interval(secs => $4), claimed_at = ${at}, next_retry_at = NULL,
        ready_at = CASE WHEN t.attempt + 1 < t.max_attempts THEN ${at} + make_interval(secs => $4) END,
        claimed_under_policy = ${admission === 'admit'}, updated_at = now()
      FROM free, (SELECT ${NEW_TOKEN} AS token) tok WHERE t.endpoint_id = free.endpoint_id AND t.id = free.id
      RETURNING ${COLUMNS}, t.traceparent, (SELECT count(*) FROM closed) AS taken_over,
        greatest(extract(epoch FROM ${at} - free.ready_at), 0)::float8 AS waited_seconds, tok.token AS lease_token),
    opened AS (
      INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at,
        lease_token_hash)
      SELECT endpoint_id, id, claims, attempt, owner_session_id, claimed_at, lease_expires_at, ${tokenHash('lease_token')}
        FROM claimed),
    pruned AS (${pruneAttemptsSql(keep)})
    SELECT claimed.*, ${ACKED_RINGS} AS rings, ${admitted} AS admission, ${PRIOR_ATTEMPTS} AS prior_attempts,
        ${ANSWERS} AS answers
      FROM claimed
    UNION ALL
    ${held}`;
}

/**
 * A new lease token (docs/design/todos.md, "Lease tokens"): `lt_` and two random UUIDs'
 * 32 bytes in base64url, 244 random bits from PostgreSQL's strong random source. The
 * claim answers it once; the attempt keeps only its SHA-256 (tokenHash).
 */
export const NEW_TOKEN = `'lt_' || translate(rtrim(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()),
  'base64'), '='), '+/', '-_')`;

/**
 * Keeps at most `keep` (a parameter: SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO) attempts of the
 * claimed todo: the ended ones older than that go. Only a todo claimed more than `keep`
 * times probes the primary key for them; a todo released over and over otherwise grows
 * without bound (release does not spend its attempts).
 */
function pruneAttemptsSql(keep: string): string {
  return `DELETE FROM todo_attempts a USING claimed
     WHERE claimed.claims > ${keep}::int AND a.endpoint_id = claimed.endpoint_id AND a.todo_id = claimed.id
       AND a.seq <= claimed.claims - ${keep}::int AND a.ended_at IS NOT NULL`;
}

/**
 * What the attempts before this claim left, newest first, at most PRIOR_SHOWN: a retrying
 * agent sees what the last one did. Read in the claim statement, so its snapshot is from
 * before it: an attempt still open there is the lapsed one this claim took over, which the
 * statement closes as lease_expired. A first claim reads nothing.
 */
export const PRIOR_SHOWN = 5;
export const PRIOR_ATTEMPTS = `CASE WHEN claimed.claims > 1 THEN (
      SELECT coalesce(jsonb_agg(jsonb_build_object('attempt', p.attempt,
               'outcome', coalesce(p.outcome, 'lease_expired'), 'summary', p.summary,
               'summary_truncated', p.summary_truncated, 'artifact', p.artifact,
               'ended_at', coalesce(p.ended_at, now()))
               || CASE WHEN p.outcome = 'asked' THEN jsonb_build_object('ask', ${askOfAttempt('p')}) ELSE '{}' END
             ORDER BY p.seq DESC), '[]'::jsonb)
        FROM (SELECT a.* FROM todo_attempts a
               WHERE a.endpoint_id = claimed.endpoint_id AND a.todo_id = claimed.id AND a.seq < claimed.claims
               ORDER BY a.seq DESC LIMIT ${PRIOR_SHOWN}) p)
    ELSE '[]'::jsonb END`;

/**
 * What the todo's questions to a human got (docs/design/ask-human.md): the answered and
 * timed-out ones, oldest first. A first claim asked nothing, so it reads nothing.
 */
export const ANSWERS = `CASE WHEN claimed.claims > 1 THEN ${answersOf('claimed.endpoint_id', 'claimed.id')}
    ELSE '[]'::jsonb END`;

/**
 * The claim is the acknowledgement (docs/design/doorbell-acknowledgement.md, "A claim"):
 * the claimed todo's open rings on this endpoint and the endpoint's open digest rings are
 * acknowledged by the claim statement itself (ack_via = claim), so a claim stays one
 * autocommit round trip. Two probes of the open-rings index decide whether there is
 * anything to acknowledge; only then does ack_rings_of_claim() (0010_claim_ack.sql) touch
 * the rings and sessions, so a todo nobody rang costs two index probes, not two more
 * tables written.
 */
export const ackedRingsOf = (session: string) => `CASE WHEN EXISTS (SELECT 1 FROM doorbell_rings r
                     WHERE r.endpoint_id = $1 AND r.todo_id = claimed.id AND r.acked_at IS NULL)
                  OR EXISTS (SELECT 1 FROM doorbell_rings r
                     WHERE r.endpoint_id = $1 AND r.todo_id IS NULL AND r.acked_at IS NULL)
      THEN ack_rings_of_claim($1, claimed.id, ${session}) END`;
export const ACKED_RINGS = ackedRingsOf('$3');

const NULL_TODO = [...COLUMNS.split(','), 'traceparent', 'taken_over', 'waited_seconds', 'lease_token', 'rings']
  .map(() => 'NULL')
  .join(', ');

/**
 * A claimed row: `taken_over` counts a lapsed attempt it closed; `waited_seconds` is how
 * long it had been ready (its ready_at before the claim) when the claim stamped it, for
 * switchboard_queue_wait_seconds; `rings` are the rings it acknowledged (null: none);
 * `traceparent` is the todo's stored trace context, which the claim's span links to
 * (docs/design/tracing.md) — it rides in the statement already made, never a query of its own.
 */
export type ClaimedTodo = Todo & {
  traceparent: string | null;
  taken_over: number;
  waited_seconds: number;
  /** The new attempt's lease token, in the clear: answered once, never stored or logged. */
  lease_token: string;
  rings: RingOutcome[] | null;
  /** What the attempts before this one left, newest first (PRIOR_SHOWN at most). */
  prior_attempts: PriorAttempt[];
  /** The todo's answered and timed-out questions, oldest first (docs/design/ask-human.md). */
  answers: TodoAnswer[];
};

/** An earlier attempt as a claim answers it. */
export interface PriorAttempt {
  attempt: number;
  outcome: string;
  summary: string | null;
  summary_truncated: boolean;
  artifact: string | null;
  ended_at: string;
  /** On an `asked` attempt: its question and how it ended. */
  ask?: TodoAnswer & { outcome: string | null };
}

export type { AdmitAnswer };

/** A policy as the probe returns it (jsonb: its columns, timestamps as text) and the probe's instant. */
export type ProbedPolicy = Record<string, unknown> & { queue: string; probed_at: string };

/**
 * A claim statement's row: a claimed todo, its `admission` set when a policy admitted
 * it; or, without todo columns (`id` null), from a probe one row per policy on the
 * requested queues (nothing picked), or from an admit statement the refusal.
 */
export type ClaimRow =
  (ClaimedTodo & { admission: AdmitAnswer | null }) | { id: null; queue: null; admission: ProbedPolicy | AdmitAnswer };

// Claim order: pending todos by the highest priority first, the oldest ready first within
// a priority, then lapsed claims and due retries by age (CLAIM_RANK, docs/design/todos.md).
// The ready indexes (0014_work_model.sql) hold exactly this order
// after the endpoint (and queue), so the scan follows an index and stops at the first
// unlocked row, with no sort; ties (a bulk insert) fall back to index order. One queue
// compares with `=` so the planner can use the per-queue index; several use the
// per-endpoint one.
// The attempts cap is each statement's last parameter: $5 for claim_next, $6 for claim by
// id, $10 on the admission path (whose $5–$9 are the id and the policies).
const keepParam = (admission: 'probe' | 'admit', byId: boolean) => (admission === 'admit' ? '$10' : byId ? '$6' : '$5');

export const nextSql = (queueMatch: string, admission: 'probe' | 'admit' = 'probe') =>
  claimSql(
    (gate) => `
  SELECT t.endpoint_id, t.id, t.claims, t.queue, t.ready_at FROM todos t
   WHERE t.endpoint_id = $1 AND ${queueMatch} AND ${CLAIMABLE} AND ${gate}
   ORDER BY ${CLAIM_RANK} DESC, t.ready_at
   LIMIT 1 FOR UPDATE SKIP LOCKED`,
    admission,
    keepParam(admission, false),
  );
const CLAIM_NEXT_ONE = nextSql('t.queue = ($2::text[])[1]');
const CLAIM_NEXT_ANY = nextSql('t.queue = ANY($2::text[])');

/**
 * The first claimable todo in claim order over the given queues, skipping rows other claimers hold:
 * the claimed row, or the policies of the queues when any has one (nothing claimed).
 */
export async function claimNext(db: Queryable, a: ClaimArgs): Promise<ClaimRow[]> {
  const sql = a.queues.length === 1 ? CLAIM_NEXT_ONE : CLAIM_NEXT_ANY;
  const res = await db.query<ClaimRow>({
    name: a.queues.length === 1 ? 'claim_next_one' : 'claim_next_any',
    text: sql,
    values: [a.endpointId, a.queues, a.sessionId, a.leaseSeconds, a.keepAttempts ?? DEFAULT_ATTEMPTS_KEPT],
  });
  return res.rows;
}

/**
 * Whether any claimable todo of the queues exists, locked or not (a plain read, no lock):
 * after a claim statement found nothing, a yes means every candidate was locked by
 * someone else for an instant — a doorbell pass ringing it, another claimer — and the
 * claim is worth trying again.
 */
export async function anyClaimable(db: Queryable, a: { endpointId: string; queues: string[] }): Promise<boolean> {
  const res = await db.query<{ found: boolean }>({
    name: 'any_claimable',
    text: `SELECT EXISTS (SELECT 1 FROM todos t
             WHERE t.endpoint_id = $1 AND t.queue = ANY($2::text[]) AND ${CLAIMABLE}) AS found`,
    values: [a.endpointId, a.queues],
  });
  return res.rows[0]?.found === true;
}

export const byIdSql = (admission: 'probe' | 'admit' = 'probe') =>
  claimSql(
    (gate) => `
  SELECT t.endpoint_id, t.id, t.claims, t.queue, t.ready_at FROM todos t
   WHERE t.endpoint_id = $1 AND t.queue = ANY($2::text[]) AND t.id = $5 AND ${CLAIMABLE} AND ${gate}
   FOR UPDATE`,
    admission,
    keepParam(admission, true),
  );
const CLAIM_BY_ID = byIdSql();

/** One named todo, waiting for a concurrent claimer's lock and re-checking after it (or the policies, as above). */
export async function claimById(db: Queryable, a: ClaimArgs & { id: string }): Promise<ClaimRow[]> {
  const res = await db.query<ClaimRow>({
    name: 'claim_by_id',
    text: CLAIM_BY_ID,
    values: [a.endpointId, a.queues, a.sessionId, a.leaseSeconds, a.id, a.keepAttempts ?? DEFAULT_ATTEMPTS_KEPT],
  });
  return res.rows;
}

export { complete, fail, heartbeat, release, type BeatTodo, type OwnedArgs, type SettledTodo } from './settles.js';
