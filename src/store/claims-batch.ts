// The batched claim_next (docs/design/coalescing.md, "Claims"): one statement serves
// several claim_next calls of one endpoint and queue set. One FOR UPDATE SKIP LOCKED pass
// locks up to one todo per caller in claim order; the k-th todo goes to the k-th caller
// (the one queued first takes the best), each with its own attempt row, lease token, lease
// and attempts cap, exactly as src/store/claims.ts's claim_next would have given it.
//
// Admission: as the single statement's probe, the pick carries "no requested queue has a
// policy"; when one has, nothing is locked and the policies come back, and every caller of
// the batch gets them, so each takes the admit path alone (src/todos/claim-loop.ts).
//
// Rings: each claimed row acknowledges its todo's rings under its own caller's session
// (ackedRingsOf). The rows are acknowledged in caller order, each call of
// ack_rings_of_claim() (0024_claim_ack_delivery.sql) a statement of its own that sees what
// the calls before it wrote, so the endpoint's open digest rings go to the first caller
// only — what the first of N single claims would have taken, and no later one finds open.

import type { Queryable } from '../db/pool.js';
import { prepared } from '../db/prepared.js';
import { DEFAULT_ATTEMPTS_KEPT } from '../domain/attempts.js';
import { ANSWERS, NEW_TOKEN, PRIOR_ATTEMPTS, ackedRingsOf, type ClaimRow } from './claims.js';
import { CLAIMABLE, CLAIM_RANK, closeAttemptSql, todoColumnsOf, tokenHash } from './todo-sql.js';

const COLUMNS = todoColumnsOf('t');

/** One caller of a batch: what its own claim_next would have passed. */
export interface BatchCaller {
  sessionId: string;
  leaseSeconds: number;
  keepAttempts?: number;
}

// $1 endpoint, $2 queues, $3 the callers' sessions, $4 their lease seconds, $5 their
// attempts caps: caller k (1-based) is element k of each array. `caller` on a claimed row
// names whose it is.
const LEASE = `make_interval(secs => ($4::float8[])[free.caller])`;

const NULLS = [...COLUMNS.split(','), 'traceparent', 'taken_over', 'waited_seconds', 'lease_token', 'caller', 'rings']
  .map(() => 'NULL')
  .join(', ');

/**
 * The batch's statement for `callers` callers: the LIMIT is written into the text, so each
 * batch size is its own prepared statement, planned once and generically (db/prepared.ts)
 * — a generic plan of `LIMIT cardinality($3)` is costed at a tenth of the backlog, so
 * PostgreSQL re-planned the statement on every run (2.5 ms, half again its running time).
 */
export const nextManySql = (queueMatch: string, callers: number | string = 'cardinality($3::text[])') => `WITH
    pol AS (SELECT to_jsonb(p) || jsonb_build_object('probed_at', clock_timestamp()) AS policy
              FROM admission_policies p WHERE p.endpoint_id = $1 AND p.queue = ANY($2::text[])),
    locked AS (
      SELECT t.endpoint_id, t.id, t.claims, t.queue, t.ready_at, ${CLAIM_RANK} AS rank FROM todos t
       WHERE t.endpoint_id = $1 AND ${queueMatch} AND ${CLAIMABLE} AND NOT EXISTS (SELECT 1 FROM pol)
       ORDER BY ${CLAIM_RANK} DESC, t.ready_at
       LIMIT ${callers} FOR UPDATE SKIP LOCKED),
    free AS (
      SELECT locked.*, row_number() OVER (ORDER BY locked.rank DESC, locked.ready_at, locked.id)::int AS caller,
             ${NEW_TOKEN} AS token
        FROM locked),
    closed AS (${closeAttemptSql('free', 'lease_expired')} RETURNING a.todo_id),
    claimed AS (
      UPDATE todos t SET
        state = 'claimed', owner_session_id = ($3::text[])[free.caller], attempt = t.attempt + 1,
        claims = t.claims + 1, lease_expires_at = now() + ${LEASE}, claimed_at = now(), next_retry_at = NULL,
        ready_at = CASE WHEN t.attempt + 1 < t.max_attempts THEN now() + ${LEASE} END,
        claimed_under_policy = false, updated_at = now()
      FROM free WHERE t.endpoint_id = free.endpoint_id AND t.id = free.id
      RETURNING ${COLUMNS}, t.traceparent, (SELECT count(*) FROM closed WHERE closed.todo_id = t.id) AS taken_over,
        greatest(extract(epoch FROM now() - free.ready_at), 0)::float8 AS waited_seconds, free.token AS lease_token,
        free.caller),
    opened AS (
      INSERT INTO todo_attempts (endpoint_id, todo_id, seq, attempt, session_id, claimed_at, lease_expires_at,
        lease_token_hash)
      SELECT endpoint_id, id, claims, attempt, owner_session_id, claimed_at, lease_expires_at, ${tokenHash('lease_token')}
        FROM claimed),
    pruned AS (
      DELETE FROM todo_attempts a USING claimed
       WHERE claimed.claims > ($5::int[])[claimed.caller] AND a.endpoint_id = claimed.endpoint_id
         AND a.todo_id = claimed.id AND a.seq <= claimed.claims - ($5::int[])[claimed.caller]
         AND a.ended_at IS NOT NULL)
    SELECT claimed.*, ${ackedRingsOf('claimed.owner_session_id')} AS rings, NULL::jsonb AS admission,
        ${PRIOR_ATTEMPTS} AS prior_attempts, ${ANSWERS} AS answers
      FROM (SELECT * FROM claimed ORDER BY caller) claimed
    UNION ALL
    SELECT ${NULLS}, pol.policy, NULL, NULL FROM pol`;

// As claim_next: one queue compares with `=` (the per-queue ready index), several with ANY.
const ONE_QUEUE = 't.queue = ($2::text[])[1]';
const ANY_QUEUE = 't.queue = ANY($2::text[])';

/** The statement texts made so far, by queue match and batch size (at most 2 × the batch bound). */
const texts = new Map<string, string>();

function manySql(oneQueue: boolean, callers: number): string {
  const key = `${oneQueue ? 1 : 'n'}:${callers}`;
  let text = texts.get(key);
  if (text === undefined) {
    if (!Number.isSafeInteger(callers) || callers < 1) throw new RangeError(`claim batch of ${callers}`);
    text = nextManySql(oneQueue ? ONE_QUEUE : ANY_QUEUE, callers);
    texts.set(key, text);
  }
  return text;
}

/**
 * claim_next for several callers in one statement: one answer per caller, in caller
 * order, each what claims.claimNext would have answered it — its claimed row, or every
 * policy of the queues (nothing claimed for anyone) when one has a policy, or [] when the
 * claimable rows ran out before this caller.
 */
export async function claimNextMany(
  db: Queryable,
  endpointId: string,
  queues: string[],
  callers: BatchCaller[],
): Promise<ClaimRow[][]> {
  const res = await db.query<ClaimRow & { caller: number | null }>(
    prepared(manySql(queues.length === 1, callers.length), [
      endpointId,
      queues,
      callers.map((c) => c.sessionId),
      callers.map((c) => c.leaseSeconds),
      callers.map((c) => c.keepAttempts ?? DEFAULT_ATTEMPTS_KEPT),
    ]),
  );
  const out: ClaimRow[][] = callers.map(() => []);
  const policies: ClaimRow[] = [];
  for (const { caller, ...row } of res.rows) {
    if (row.id === null) policies.push(row);
    else out[(caller as number) - 1]?.push(row);
  }
  return policies.length > 0 ? callers.map(() => [...policies]) : out;
}
