// Todos: states, limits, validation of inputs and the retry schedule. Pure.
//
// State machine (docs/design/todos.md). "Claimable" is a predicate, not a state:
//
//   create ──▶ pending ──claim──▶ claimed ──complete──▶ done
//                ▲  ▲               │  │
//                │  └───release─────┘  ├──fail (attempts left)──▶ failed ──due──▶ (claimable)
//                │                     │                            │
//                │   lease lapses:     └──fail (at the cap)──▶ failed, dead letter
//                │   takeover by claim, or the reaper
//                │   (back to pending, or dead letter at the cap)
//                └──retry_now (human: attempt = 0) from failed or canceled
//   ask_human (holder): claimed ──▶ waiting_on_human ──answer or timeout──▶ pending
//     (no lease, no ready_at: nothing claims it until a human answers; docs/design/ask-human.md)
//   cancel (human): pending | claimed | failed | waiting_on_human ──▶ canceled
//
// done, canceled and dead-lettered failed rows are terminal; only retry_now revives them.

import { z } from 'zod';
import { invalidArgument } from './errors.js';
import { firstIssue, maxLength, zod3Messages } from './issues.js';
import { BACKOFF_BOUNDS } from './backoff.js';
import { UNSTORABLE_MESSAGE, unstorable } from './unstorable.js';

export const TODO_STATES = ['pending', 'claimed', 'done', 'failed', 'canceled', 'waiting_on_human'] as const;
export type TodoState = (typeof TODO_STATES)[number];

/**
 * The states the maintained counters (0012, 0014) count by: a todo's state, except that a
 * scheduled one (pending, not ready before its not_before) counts as 'scheduled', so the
 * pending count is the ready work alone.
 */
export const COUNTED_STATES = [...TODO_STATES, 'scheduled'] as const;
export type CountedState = (typeof COUNTED_STATES)[number];

export const ATTEMPT_OUTCOMES = [
  'completed',
  'failed',
  'released',
  'lease_expired',
  'reaped',
  'canceled',
  'revoked',
  'asked',
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const QUEUE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const LIMITS = {
  titleChars: 200,
  bodyBytes: 64 * 1024,
  payloadBytes: 256 * 1024,
  resultBytes: 256 * 1024,
  errorChars: 8 * 1024,
  idempotencyKeyChars: 200,
  kindChars: 64,
  sourceChars: 64,
  maxAttempts: 100,
  defaultMaxAttempts: 5,
  listDefault: 50,
  listMax: 200,
} as const;

/** Lease bounds in seconds: below 5 s a heartbeat cannot keep up, above a day is a leak. */
export const LEASE_BOUNDS = { min: 5, max: 86_400 } as const;

/** Priority bounds: higher is more urgent; claims take the highest first (0014_work_model.sql). */
export const PRIORITY_BOUNDS = { min: -100, max: 100, default: 0 } as const;

/** Per call > endpoint default > server default. */
export function resolveLeaseSeconds(
  perCall: number | undefined,
  endpointDefault: number | null,
  serverDefault: number,
): number {
  return perCall ?? endpointDefault ?? serverDefault;
}

const jsonText = (value: unknown) => JSON.stringify(value) ?? '';
const jsonBytes = (value: unknown) => Buffer.byteLength(jsonText(value), 'utf8');

/** How deep JSON may nest: far beyond any real payload, far below what would exhaust a stack. */
export const MAX_JSON_DEPTH = 100;

/**
 * Whether a JSON value nests deeper than MAX_JSON_DEPTH, or holds a character PostgreSQL
 * cannot store (a NUL, an unpaired surrogate) in a string or a key. Iterative: a hostile
 * value thousands of levels deep cannot overflow the stack (which JSON.stringify and
 * PostgreSQL's jsonb parser would do with it).
 */
function inspectJson(value: unknown): { tooDeep: boolean; nul: boolean } {
  const stack: [unknown, number][] = [[value, 1]];
  let nul = false;
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item === 'string') {
      nul ||= unstorable(item);
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth > MAX_JSON_DEPTH) return { tooDeep: true, nul };
    if (Array.isArray(item)) {
      for (const nested of item as unknown[]) stack.push([nested, depth + 1]);
      continue;
    }
    for (const [key, nested] of Object.entries(item)) {
      nul ||= unstorable(key);
      stack.push([nested, depth + 1]);
    }
  }
  return { tooDeep: false, nul };
}

/** Text PostgreSQL can store: no NUL characters, at most `max` characters (code points). */
const text = (max: number) =>
  z
    .string()
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
    .refine((s) => [...s].length <= max, `must be at most ${max} characters`);

/** Any JSON value under a byte cap, without the escapes jsonb refuses (\u0000, unpaired surrogates). */
const json = (maxBytes: number) =>
  z.unknown().check((ctx) => {
    // One check at a time, in order: the size is measured only on a value known to be shallow.
    const fail = (message: string) => void ctx.issues.push({ code: 'custom', message, input: ctx.value });
    const v = ctx.value;
    if (v === undefined) return fail('must be JSON');
    const { tooDeep, nul } = inspectJson(v);
    if (tooDeep) return fail(`must be nested at most ${MAX_JSON_DEPTH} levels deep`);
    if (nul) return fail(UNSTORABLE_MESSAGE);
    if (jsonBytes(v) > maxBytes) fail(`must be at most ${maxBytes} bytes as JSON`);
  });

/** How tools/list describes a queue field to an agent. */
export const QUEUE_DESCRIPTION = 'A queue name granted to this endpoint, e.g. `inbox`.';

const queue = z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}');

const retryBackoff = z
  .strictObject({
    base_seconds: z.number().int().min(1).max(BACKOFF_BOUNDS.baseMax),
    max_seconds: z.number().int().min(1).max(BACKOFF_BOUNDS.maxMax),
  })
  .refine((b) => b.max_seconds >= b.base_seconds, {
    message: 'max_seconds must be at least base_seconds',
    path: ['max_seconds'],
  });

/**
 * A todo as its creator sends it. The descriptions are what create_todo shows an agent
 * (which may not set `source`: see src/todos/create.ts).
 */
export const createTodoInput = z.strictObject({
  queue: queue.describe(QUEUE_DESCRIPTION),
  title: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .pipe(text(LIMITS.titleChars))
    .describe(`One line saying what to do (at most ${LIMITS.titleChars} characters).`),
  body: text(Infinity)
    .refine((s) => Buffer.byteLength(s, 'utf8') <= LIMITS.bodyBytes, `must be at most ${LIMITS.bodyBytes} bytes`)
    .optional()
    .describe('Details in text, at most 64 KiB.'),
  payload: json(LIMITS.payloadBytes).optional().describe('Any JSON value for the worker, at most 256 KiB.'),
  kind: text(LIMITS.kindChars).pipe(z.string().min(1)).optional().describe('A short label for the kind of work.'),
  source: text(LIMITS.sourceChars).pipe(z.string().min(1)).optional(),
  idempotency_key: text(LIMITS.idempotencyKeyChars)
    .pipe(z.string().min(1))
    .optional()
    .describe(
      'Makes a repeated create return the same todo: the live one, or one finished within the idempotency window (24 h by default).',
    ),
  priority: z
    .number()
    .int()
    .min(PRIORITY_BOUNDS.min)
    .max(PRIORITY_BOUNDS.max)
    .optional()
    .describe(
      'Higher is more urgent (-100 to 100, default 0): claims take the highest first, oldest first within one.',
    ),
  not_before: z.iso
    .datetime({ offset: true })
    .optional()
    .describe(
      'RFC 3339 time before which nobody may claim it; it rings when it becomes ready. Past or now: ready at once.',
    ),
  retry_backoff: retryBackoff
    .optional()
    .describe(
      'This todo’s retry delays: base_seconds doubling per failed attempt up to max_seconds (default 30 and 900).',
    ),
  max_attempts: z
    .number()
    .int()
    .min(1)
    .max(LIMITS.maxAttempts)
    .optional()
    .describe(`Claims allowed before it is dead-lettered (default ${LIMITS.defaultMaxAttempts}).`),
});
export type CreateTodoInput = z.infer<typeof createTodoInput>;

export const leaseSeconds = z
  .number()
  .int()
  .min(LEASE_BOUNDS.min)
  .max(LEASE_BOUNDS.max)
  .describe(`Lease length in seconds (${LEASE_BOUNDS.min}–${LEASE_BOUNDS.max}); default: this endpoint's lease.`);

/** The most a call may wait (claim_next, next_message): well inside any HTTP client's timeout. */
export const MAX_WAIT_SECONDS = 60;

/** How long a claim_next or next_message call may wait for work (docs/design/mcp-surface.md, "Waiting"). */
export const waitSeconds = z.number().int().min(0).max(MAX_WAIT_SECONDS);

/** A todo id as the verbs take it (what it names is the store's business: anything else is not found). */
export const todoId = z.string().min(1).check(maxLength(64)).describe('The todo id, `td_…`.');

export const listTodosInput = z.strictObject({
  queue: queue.optional().describe(QUEUE_DESCRIPTION),
  state: z.enum(TODO_STATES).optional().describe('Only todos in this state.'),
  limit: z.number().int().min(1).max(LIMITS.listMax).optional().describe('Page size.'),
  cursor: z.string().check(maxLength(64)).optional().describe('`next_cursor` from the previous page.'),
  include_synthetic: z.boolean().optional().describe('Include doorbell self-test todos.'),
});
export type ListTodosInput = z.infer<typeof listTodosInput>;

export const resultValue = json(LIMITS.resultBytes);
export const errorText = text(LIMITS.errorChars);

const ZOD3_WORDS = { error: zod3Messages } as const;

/**
 * Parses with a zod schema; the first problem becomes invalid_argument naming its field,
 * in zod 3's words where the schema gives none (src/domain/issues.ts).
 */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input, ZOD3_WORDS);
  if (parsed.success) return parsed.data;
  const issue = firstIssue(parsed.error.issues);
  if (!issue) throw invalidArgument('input', 'is invalid');
  if (issue.code === 'unrecognized_keys') {
    throw invalidArgument(issue.keys[0] ?? 'input', 'is not a known field');
  }
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
  throw invalidArgument(field, issue.message);
}

/** A todo as the store returns it. Timestamps are Date; edges render RFC 3339. */
export interface Todo {
  id: string;
  endpoint_id: string;
  queue: string;
  title: string;
  body: string;
  payload: unknown;
  kind: string | null;
  source: string | null;
  created_by_human_id: string | null;
  created_by_endpoint_id: string | null;
  /** The schedule that made it (source "schedule"), else null. */
  schedule_id: string | null;
  /** The webhook event that made it (source "webhook", docs/design/intake.md), else null. */
  event_id: string | null;
  idempotency_key: string | null;
  state: TodoState;
  attempt: number;
  max_attempts: number;
  /** -100..100, higher first (PRIORITY_BOUNDS). */
  priority: number;
  /** Unclaimable before this instant; a pending todo with it ahead is scheduled. */
  not_before: Date | null;
  claims: number;
  owner_session_id: string | null;
  lease_expires_at: Date | null;
  next_retry_at: Date | null;
  claimed_at: Date | null;
  completed_at: Date | null;
  result: unknown;
  error: string | null;
  ring_attempts: number;
  last_ringed_at: Date | null;
  synthetic: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A todo without its content, as the lease verbs answer (see TODO_SUMMARY_COLUMNS). */
export type TodoSummary = Pick<
  Todo,
  | 'endpoint_id'
  | 'id'
  | 'queue'
  | 'title'
  | 'state'
  | 'attempt'
  | 'max_attempts'
  | 'claims'
  | 'owner_session_id'
  | 'lease_expires_at'
  | 'next_retry_at'
  | 'completed_at'
  | 'error'
  | 'created_at'
  | 'updated_at'
>;

export interface TodoAttempt {
  seq: number;
  attempt: number;
  session_id: string | null;
  claimed_at: Date;
  lease_expires_at: Date;
  ended_at: Date | null;
  outcome: AttemptOutcome | null;
  /** What the agent said when it ended the attempt (docs/design/todos.md, "What an attempt leaves"). */
  summary: string | null;
  summary_truncated: boolean;
  artifact: string | null;
}
