// Todo shapes on the wire, for the MCP verbs' output schemas and the REST contract alike
// (docs/design/mcp-surface.md, "Wire shapes"; docs/design/api-contract.md). Over MCP
// `body` and `payload` travel only on claims, so listing and reading stay small and an
// agent reads the content of work it holds; the REST API answers whole todos (todoOut
// below is MCP's cut). The zod schemas here describe those shapes as JSON (times are RFC
// 3339 strings); the todo use cases build the values, these only say what a client gets.

import { z } from 'zod';
import { ATTEMPT_OUTCOMES, TODO_STATES, type Todo, type TodoSummary } from '../domain/todo.js';
import { AHEAD_OVER } from '../domain/waiting.js';

export function todoOut(todo: Todo | TodoSummary): Record<string, unknown> {
  const { body: _body, payload: _payload, ...rest } = todo as Partial<Todo> & TodoSummary;
  return rest;
}

/** The arguments of a verb that takes none. */
export const noArguments = z.strictObject({});

/** A time on the wire: RFC 3339, as JSON renders a Date or PostgreSQL a timestamptz. */
export const time = z.iso.datetime({ offset: true });

/** Why a budget holds a queue back (docs/design/admission.md). */
export const deferReason = z.enum(['window_exhausted', 'in_flight_full', 'paused', 'admission_unavailable']);

/** A budgeted queue's headroom: after a claim, or in admission_status. */
export const usageOut = z
  .object({
    max_in_flight: z.number().int().nullable(),
    in_flight: z.number().int(),
    max_claims_per_window: z.number().int().nullable(),
    used: z.number().int(),
    remaining: z.number().int().nullable(),
    window_resets_at: time.nullable(),
  })
  .describe('The budget’s headroom: in flight and used in the current window, its own claim included.');

/** Whether a budget admits a queue's work now (a pending todo's `admission`, a queue's `status`). */
export const admissionStateOut = z.object({
  state: z.enum(['admissible', 'deferred']),
  reason: deferReason.nullable(),
  next_eligible_at: time.nullable(),
  exact: z.boolean().describe('Whether next_eligible_at is exact (a window reset) or a lower bound (a lease).'),
});

/** Why a todo waits (docs/design/todos.md, "Why is it waiting"): one reason, by precedence. */
export const waitingOut = z
  .discriminatedUnion('reason', [
    z.object({
      reason: z.literal('waiting_on_human'),
      since: time.describe('When the agent asked.'),
      question: z.string().describe('What it asked its owner (docs/design/ask-human.md).'),
      choices: z.array(z.string()).optional().describe('The answers offered, when it offered some.'),
    }),
    z.object({ reason: z.literal('scheduled'), until: time.nullable() }),
    z.object({ reason: z.literal('retry_backoff'), until: time }),
    z.object({ reason: z.literal('presence_out'), until: time.nullable() }),
    z.object({
      reason: z.literal('deferred'),
      until: time.nullable(),
      exact: z.boolean(),
      budget: deferReason,
      usage: usageOut.nullable().describe('The budget’s usage as its status reads it now.'),
    }),
    z.object({ reason: z.literal('no_consumer') }),
    z.object({ reason: z.literal('queued'), ahead: z.union([z.number().int().min(0), z.literal(AHEAD_OVER)]) }),
  ])
  .describe(
    'Why it is not being worked on yet: waiting_on_human (with the question), scheduled, retry_backoff, presence_out, deferred, no_consumer, or ' +
      'queued with the number of todos ahead of it in claim order (0: next; "1000+" past a thousand).',
  );

/** The columns every todo answer has (TODO_SUMMARY_COLUMNS): what the lease verbs answer. */
const summary = {
  endpoint_id: z.string(),
  id: z.string(),
  queue: z.string(),
  title: z.string(),
  state: z.enum(TODO_STATES),
  attempt: z.number().int(),
  max_attempts: z.number().int(),
  claims: z.number().int(),
  owner_session_id: z.string().nullable(),
  lease_expires_at: time.nullable(),
  next_retry_at: time.nullable(),
  completed_at: time.nullable(),
  error: z.string().nullable(),
  created_at: time,
  updated_at: time,
};

/** A todo as heartbeat, complete, fail and release answer it. */
export const todoSummaryOut = z.object(summary);

/** The rest of a todo's columns, but for its content. */
const details = {
  kind: z.string().nullable(),
  source: z.string().nullable(),
  created_by_human_id: z.string().nullable(),
  created_by_endpoint_id: z.string().nullable(),
  schedule_id: z.string().nullable().describe('The recurring schedule that made this todo, if one did.'),
  event_id: z.string().nullable().describe('The webhook event (delivery) that made this todo, if one did.'),
  idempotency_key: z.string().nullable(),
  priority: z.number().int().describe('-100 to 100, higher first: claims take the highest priority first.'),
  not_before: time.nullable().describe('Unclaimable before this instant; a pending todo with it ahead is scheduled.'),
  claimed_at: time.nullable(),
  result: z.unknown().describe('What complete or fail recorded; null before.'),
  ring_attempts: z.number().int(),
  last_ringed_at: time.nullable(),
  synthetic: z.boolean(),
};

/** A todo as list_todos, get_todo and create_todo answer it: no body, no payload. */
export const todoListedOut = z.object({
  ...summary,
  ...details,
  admission: admissionStateOut
    .optional()
    .describe('On a pending todo of a budgeted queue: whether the budget admits it now.'),
  waiting: waitingOut
    .optional()
    .describe('On a pending todo, a failed one whose retry is coming, or one waiting on a human.'),
});

/** A todo as the REST API answers it: every column, its content, and why it waits. */
export const todoFullOut = todoListedOut.extend({ body: z.string(), payload: z.unknown() });

/** A claimed todo: everything, its content included. */
export const todoClaimedOut = z.object({
  ...summary,
  ...details,
  body: z.string(),
  payload: z.unknown(),
});

/** An attempt's outcome once it ended (src/domain/todo.ts). */
const outcome = z.enum(ATTEMPT_OUTCOMES);

/** A question to a human that ended, answered or timed out (docs/design/ask-human.md). */
export const answerOut = z.object({
  question: z.string(),
  choices: z.array(z.string()).optional().describe('The choices offered, when there were any.'),
  text: z.string().optional().describe('A free-text answer.'),
  choice: z.number().int().optional().describe('The index of the chosen answer in choices.'),
  by: z.string().nullable().describe('Who answered (their email); null when it timed out.'),
  at: time.describe('When it was answered or timed out.'),
  timed_out: z.literal(true).optional().describe('Nobody answered in time.'),
});

/** What an earlier attempt left, as a claim answers it. */
export const priorAttemptOut = z.object({
  attempt: z.number().int(),
  outcome,
  summary: z.string().nullable(),
  summary_truncated: z.boolean(),
  artifact: z.string().nullable(),
  ended_at: time,
  ask: answerOut
    .partial({ by: true, at: true })
    .extend({ outcome: z.enum(['answered', 'timed_out', 'canceled']).nullable() })
    .optional()
    .describe('On an attempt that asked a human: the question, and the answer once there is one.'),
});

/** claim's answer, and claim_next's when it took one. */
export const claimedOut = z.object({
  todo: todoClaimedOut,
  lease_token: z
    .string()
    .optional()
    .describe(
      'Pass it with id to heartbeat, complete, fail or release, from this or any later session of this ' +
        'endpoint, or a request without a session. Absent on a doorbell self-test todo, which the claim completes.',
    ),
  prior_attempts: z
    .array(priorAttemptOut)
    .optional()
    .describe('What earlier attempts at this todo left, newest first (at most 5).'),
  answers: z
    .array(answerOut)
    .optional()
    .describe('What humans answered to the questions asked with ask_human, oldest first.'),
  timed_out: z
    .literal(true)
    .optional()
    .describe('The question the last attempt asked timed out: nobody answered in time.'),
  admission: usageOut.optional().describe('Only on a queue with a budget.'),
});

/** How a webhook event's routing rules made a todo (docs/design/routing.md, "The trace"). */
export const routeOut = z
  .object({
    event_id: z.string().describe('The webhook event that made it.'),
    disposition: z.string().describe('What routing did with the event: routed (or quarantined, then released).'),
    steps: z
      .array(z.record(z.string(), z.unknown()))
      .describe("The rule's decision (its id, the values its expressions produced) and this todo's route."),
  })
  .describe('Present when a webhook event made the todo.');

/** A todo's lineage (docs/design/handoff.md, "Lineage"): the todo it was handed from, and those handed from it. */
export const linksOut = z
  .object({
    parent: z
      .object({
        id: z.string().describe('The parent todo, on the sending endpoint.'),
        endpoint: z.string().describe("The sending endpoint's slug."),
        depth: z.number().int().describe('How deep this todo is in its chain of hand-offs.'),
        reply: z.boolean().describe('Whether its outcome goes back to the sender when it ends.'),
      })
      .optional(),
    children: z.array(
      z.object({
        id: z.string(),
        endpoint: z.string().describe('The endpoint it was handed to (its slug).'),
        queue: z.string().nullable(),
        state: z.string().nullable().describe('null once the child was pruned.'),
        title: z.string().nullable(),
        reply: z.boolean(),
      }),
    ),
  })
  .describe('Lineage: the parent this todo was handed from (if any) and the todos handed from it.');

/** A todo's attempt as get_todo answers it, oldest first. */
export const attemptOut = z.object({
  seq: z.number().int(),
  attempt: z.number().int(),
  session_id: z.string().nullable(),
  claimed_at: time,
  lease_expires_at: time,
  ended_at: time.nullable(),
  outcome: outcome.nullable(),
  summary: z.string().nullable(),
  summary_truncated: z.boolean(),
  artifact: z.string().nullable(),
});

/** One answer of the lease verbs. */
export const leaseOut = z.object({ todo: todoSummaryOut });
