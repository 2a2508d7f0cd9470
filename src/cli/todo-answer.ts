// `switchboard todo answer ID TEXT|--choice N`: answer the question an agent asked about a
// todo (docs/design/ask-human.md) over the REST API. The todo goes back to its queue,
// first in line; `conflict` (exit code of a refused request) when it no longer waits,
// because someone answered first, it timed out or it was canceled.

import type { Command } from 'commander';
import { ASK_LIMITS, type TodoAnswer } from '../domain/asks.js';
import { signedInClient } from './client.js';
import { CliError, EXIT } from './exit.js';
import { apiCommand, run, textFlag, wholeNumber, type CommonOptions } from './flags.js';
import { emit, section, table } from './output.js';

const todoPath = (id: string) => `/api/v1/todos/${encodeURIComponent(id)}`;

interface AnswerOptions extends CommonOptions {
  choice?: string;
}

export function registerAnswer(group: Command): void {
  apiCommand(group, 'answer', 'answer the question a todo waits on; it goes back to its queue first')
    .argument('<ID>', 'todo id (td_…)')
    .argument('[TEXT]', `the answer, at most ${ASK_LIMITS.answerChars} characters (or --choice)`)
    .option('--choice <N>', 'pick one of the offered choices by its number, from 0 (todo show lists them)')
    .action(run(answer));
}

/** The answer's body from the arguments: exactly one of TEXT and --choice. */
export function answerBody(text: string | undefined, opts: AnswerOptions): Record<string, unknown> {
  if (text !== undefined && opts.choice !== undefined) {
    throw new CliError('TEXT and --choice: give one, not both', EXIT.usage);
  }
  if (opts.choice !== undefined) return { choice: wholeNumber('--choice', opts.choice, 0, ASK_LIMITS.maxChoices - 1) };
  if (text === undefined) throw new CliError('TEXT: required (or pick with --choice N)', EXIT.usage);
  return { text: textFlag('TEXT', text, ASK_LIMITS.answerChars) };
}

async function answer(id: string, text: string | undefined, opts: AnswerOptions): Promise<void> {
  const body = answerBody(text, opts);
  const client = await signedInClient(opts.url);
  const out = await client.request<{ todo: { id: string; state: string; queue: string } }>(
    'POST',
    `${todoPath(id)}/answer`,
    body,
  );
  emit(opts.json, out, (a) => `answered: ${a.todo.id} is ${a.todo.state} again, first in ${a.todo.queue}`);
}

/** The answers section of `todo show`: each question and what came of it. */
export function answersSection(answers: TodoAnswer[] | undefined): string {
  if (!answers || answers.length === 0) return '';
  return section(
    'Answers:',
    table(
      answers,
      [
        { header: 'AT', value: (a) => a.at },
        { header: 'BY', value: (a) => (a.timed_out ? '(timed out)' : a.by) },
        { header: 'QUESTION', value: (a) => a.question, max: 50 },
        { header: 'ANSWER', value: (a) => answerText(a), max: 50 },
      ],
      '',
    ),
  );
}

function answerText(a: TodoAnswer): string | null {
  if (a.choice !== undefined) return `${a.choice}: ${a.choices?.[a.choice] ?? ''}`;
  return a.text ?? null;
}
