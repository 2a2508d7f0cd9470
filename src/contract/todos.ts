// Todos on the REST wire (docs/api.md, "Todos"; docs/design/api-contract.md): what pushing,
// listing, showing, retrying, cancelling, answering and the bulk actions answer.

import { z } from 'zod';
import { answerOut, attemptOut, linksOut, routeOut, todoFullOut } from './shapes.js';

/** One todo pushed: 201 when made, 200 when an idempotency key found an earlier one. */
export const todoPushedOut = z.object({ todo: todoFullOut, created: z.boolean() });

/** `{todos: [...]}` pushed at once: all or nothing, in request order. */
export const todosPushedOut = z.object({
  todos: z.array(todoFullOut).describe('In request order; a duplicate’s entry is the todo that holds its key.'),
  created: z.number().int(),
  duplicates: z.number().int(),
});

export const todoListOut = z.object({
  todos: z.array(todoFullOut),
  next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last.'),
});

export const todoShowOut = z.object({
  todo: todoFullOut,
  attempts: z.array(attemptOut),
  answers: z.array(answerOut).describe('Its ask_human questions that were answered or timed out, oldest first.'),
  route: routeOut.optional(),
  links: linksOut,
});

/** What retry, cancel and answer answer. */
export const todoOneOut = z.object({ todo: todoFullOut });

/** A bulk cancel or retry by filter (src/todos/bulk-actions.ts, BulkResult). */
export const bulkActionOut = z.object({
  action: z.enum(['cancel', 'retry']),
  dry_run: z.boolean(),
  matched: z.number().int().describe('Todos the filter matched when the action started.'),
  changed: z.number().int().describe('Todos this action changed (0 for a dry run).'),
});
