// Asking a human (docs/design/ask-human.md): the arguments of ask_human and of an answer,
// their limits, and the shapes an ask and its answer take on every surface. Pure: the
// statements are src/store/asks.ts, the use cases src/todos/ask.ts.

import { z } from 'zod';
import { invalidArgument } from './errors.js';
import { maxLength } from './issues.js';
import { leaseTokenArg } from './attempts.js';
import type { TodoSummary } from './todo.js';

export const ASK_LIMITS = {
  /** A question a person reads on a phone in one go; longer belongs in the todo's body. */
  questionChars: 4000,
  /** Two choices make a decision; past twenty a person wants free text instead. */
  minChoices: 2,
  maxChoices: 20,
  choiceChars: 200,
  answerChars: 4000,
  /** Below a minute no person can answer, and the sweep ticks are seconds apart anyway. */
  minTimeoutSeconds: 60,
} as const;

const noNul = (s: string) => !s.includes('\u0000');
const chars = (s: string) => [...s].length;

const text = (max: number) =>
  z
    .string()
    .refine(noNul, 'must not contain NUL characters')
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .refine((s) => chars(s) <= max, `must be at most ${max} characters`);

export const askHumanInput = z.strictObject({
  id: z.string().min(1).check(maxLength(64)).describe('The todo you hold, `td_…`.'),
  lease_token: leaseTokenArg.optional(),
  question: text(ASK_LIMITS.questionChars).describe(
    `What you need a person to decide or tell you (at most ${ASK_LIMITS.questionChars} characters).`,
  ),
  choices: z
    .array(text(ASK_LIMITS.choiceChars))
    .min(ASK_LIMITS.minChoices)
    .max(ASK_LIMITS.maxChoices)
    .optional()
    .describe(
      `Offer ${ASK_LIMITS.minChoices}–${ASK_LIMITS.maxChoices} answers to pick from; the answer then names one ` +
        'by its index (`choice`). Without choices the person answers in free text.',
    ),
  timeout_seconds: z
    .number()
    .int()
    .min(ASK_LIMITS.minTimeoutSeconds)
    .optional()
    .describe(
      'How long to wait for an answer before the todo comes back unanswered (timed_out: true). Default and ' +
        'maximum are server settings (SWITCHBOARD_ASK_HUMAN_TIMEOUT, SWITCHBOARD_ASK_HUMAN_MAX_TIMEOUT).',
    ),
});
export type AskHumanInput = z.output<typeof askHumanInput>;

export const answerInput = z.strictObject({
  text: text(ASK_LIMITS.answerChars).optional().describe('A free-text answer.'),
  choice: z.number().int().min(0).optional().describe('The index (from 0) of one of the offered choices.'),
});
export type AnswerInput = z.output<typeof answerInput>;

/** The answer as stored: exactly one of text and choice, and choice within the offered ones. */
export function checkAnswer(
  input: AnswerInput,
  choices: string[] | null,
): { text: string | null; choice: number | null } {
  if ((input.text === undefined) === (input.choice === undefined)) {
    throw invalidArgument('text', 'give exactly one of text and choice');
  }
  if (input.choice !== undefined) {
    if (!choices) throw invalidArgument('choice', 'this question offered no choices: answer with text');
    if (input.choice >= choices.length) {
      throw invalidArgument('choice', `must be from 0 to ${choices.length - 1} (${choices.length} choices offered)`);
    }
    return { text: null, choice: input.choice };
  }
  return { text: input.text ?? null, choice: null };
}

/** The timeout an ask gets: its own (at most the maximum), else the server's default. */
export function askTimeout(
  perCall: number | undefined,
  settings: { defaultSeconds: number; maxSeconds: number },
): number {
  if (perCall === undefined) return Math.min(settings.defaultSeconds, settings.maxSeconds);
  if (perCall > settings.maxSeconds) {
    throw invalidArgument('timeout_seconds', `must be at most ${settings.maxSeconds} (this server's maximum)`);
  }
  return perCall;
}

/** The defaults when a caller passes no settings: a day to answer, a week at most. */
export const DEFAULT_ASK_SETTINGS = { defaultSeconds: 86_400, maxSeconds: 7 * 86_400 } as const;

/**
 * One ended question as a claim and get_todo answer it, oldest first: the question, the
 * answer (text or the chosen index and its label), who and when; a question that timed
 * out has `timed_out: true` and no answer.
 */
export interface TodoAnswer {
  question: string;
  choices?: string[];
  text?: string;
  choice?: number;
  /** The answering human's email; null when the question timed out. */
  by: string | null;
  at: string;
  timed_out?: true;
}

/** An open question, for the "Needs you" view and the waiting reason. */
export interface OpenAsk {
  endpoint_id: string;
  todo_id: string;
  question: string;
  choices: string[] | null;
  asked_at: Date;
  expires_at: Date;
}

/** What the owner is told when an agent asks (the notify hooks' todo.waiting_on_human). */
export interface AskedEvent {
  endpointId: string;
  todo: TodoSummary;
  question: string;
  choices: string[] | null;
  askedAt: Date;
  expiresAt: Date;
  traceparent: string | null;
}
