// Why a live todo is not being worked on (docs/design/todos.md, "Why is it waiting"): the
// `waiting` object every pending todo read carries, and a failed todo's waiting for its
// retry. The shape and its wording are here, pure, so the API, MCP, the board and the
// CLI say the same thing; the derivation is src/todos/waiting.ts. Nothing is stored.

import type { DeferReason, Usage } from './admission.js';

/** The reasons, in precedence order: the first that holds is the one a read answers. */
export const WAITING_REASONS = [
  'waiting_on_human',
  'scheduled',
  'retry_backoff',
  'presence_out',
  'deferred',
  'no_consumer',
  'queued',
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

/** Why a budget holds a queue back, and its usage, as the budget status reads them (docs/design/admission.md). */
export type BudgetReason = DeferReason;
export type BudgetUsage = Usage;

/**
 * How many todos ahead are counted at most: a read walks at most this many (plus one)
 * entries of the ready index, whatever the backlog (docs/design/scale.md). Past it the
 * answer is "1000+"; an operator needs the order of magnitude, not the exact figure.
 */
export const AHEAD_CAP = 1000;
export const AHEAD_OVER = '1000+';

export type Waiting =
  /** Parked on a human's answer (docs/design/ask-human.md): since when, and the question. */
  | { reason: 'waiting_on_human'; since: string; question: string; choices?: string[] }
  /** Pending with a future not_before, not yet made ready (until: when it becomes ready). */
  | { reason: 'scheduled'; until: string | null }
  /** Failed with attempts left, its retry not yet due. */
  | { reason: 'retry_backoff'; until: string }
  /** The endpoint is off shift or clocked out; until: when it is next in, when known. */
  | { reason: 'presence_out'; until: string | null }
  /** The queue's budget admits nothing now; until: the budget's next eligible instant. */
  | { reason: 'deferred'; until: string | null; exact: boolean; budget: BudgetReason; usage: BudgetUsage | null }
  /** No live MCP session of the endpoint can claim from the queue. */
  | { reason: 'no_consumer' }
  /** Ready: `ahead` claimable todos come before it in claim order (0: it is next). */
  | { reason: 'queued'; ahead: number | typeof AHEAD_OVER };

/** The ahead figure of a count read with a limit of AHEAD_CAP + 1. */
export function aheadOf(count: number): number | typeof AHEAD_OVER {
  return count > AHEAD_CAP ? AHEAD_OVER : count;
}

/** One line for people (the CLI, the board); `time` renders an instant. */
export function describeWaiting(w: Waiting, time: (iso: string) => string = (iso) => iso): string {
  const until = (at: string | null, none: string) => (at ? `until ${time(at)}` : none);
  switch (w.reason) {
    case 'waiting_on_human':
      return (
        `waiting on a human since ${time(w.since)}: ${w.question}` +
        (w.choices ? ` (choices: ${w.choices.map((c, i) => `${i}) ${c}`).join(', ')})` : '')
      );
    case 'scheduled':
      return `scheduled ${until(w.until, '(not yet ready)')}`;
    case 'retry_backoff':
      return `retry backoff until ${time(w.until)}`;
    case 'presence_out':
      return `endpoint is out ${until(w.until, '(no next shift known)')}`;
    case 'deferred':
      return `deferred by the queue's budget (${w.budget.replace(/_/g, ' ')}) ${until(w.until, '(no reopen time known)')}`;
    case 'no_consumer':
      return 'no consumer: no live agent session can claim from this queue';
    case 'queued':
      return w.ahead === 0 ? 'next in queue' : `${w.ahead} ahead in queue`;
  }
}
