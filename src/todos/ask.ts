// Asking a human (docs/design/ask-human.md): the holder of a claim parks its todo on a
// question (ask_human), and the endpoint's owner answers it (API, board, CLI). The timeout
// is the sweep's (src/sweeps/asks.ts); cancel is the operator's (./operator.ts). This
// module checks the arguments, runs the one statement of each transition, classifies a
// statement that matched nothing, and after commit counts, frees a budget's slot and
// tells the owner.

import {
  askHumanInput,
  answerInput,
  askTimeout,
  checkAnswer,
  DEFAULT_ASK_SETTINGS,
  type TodoAnswer,
} from '../domain/asks.js';
export type { AskedEvent } from '../domain/asks.js';
import { AppError, notFound } from '../domain/errors.js';
import { parseInput, PRIORITY_BOUNDS, type Todo, type TodoSummary } from '../domain/todo.js';
import { reopenQueue } from '../budgets/reopen.js';
import {
  answerAsk,
  askHuman as askRow,
  openAsk,
  todoAnswers,
  waitingForHuman,
  type WaitingTodo,
} from '../store/asks.js';
import { getTodo as getRow } from '../store/todos.js';
import { zeroRowError, type Agent, type TodoDeps } from './context.js';

/**
 * The priority a todo comes back with, answered or timed out: the top, so the next claim
 * of its queue takes it (docs/design/ask-human.md, "Back in line").
 */
export const RETURN_PRIORITY = PRIORITY_BOUNDS.max;

export async function askHuman(
  deps: TodoDeps,
  agent: Agent,
  input: unknown,
): Promise<{ todo: TodoSummary; expires_at: string }> {
  const data = parseInput(askHumanInput, input);
  const timeoutSeconds = askTimeout(data.timeout_seconds, deps.asks ?? DEFAULT_ASK_SETTINGS);
  const leaseToken = data.lease_token ?? null;
  const row = await askRow(deps.db, {
    endpointId: agent.endpointId,
    id: data.id,
    sessionId: agent.sessionId,
    leaseToken,
    question: data.question,
    choices: data.choices ?? null,
    timeoutSeconds,
  });
  if (!row) {
    const holder = leaseToken === null ? { sessionId: agent.sessionId } : { leaseToken };
    throw await zeroRowError(
      deps,
      { endpointId: agent.endpointId, queues: agent.queues },
      data.id,
      'ask_human',
      holder,
    );
  }
  const {
    under_policy: underPolicy,
    run_seconds: runSeconds,
    claimer,
    traceparent,
    asked_at: askedAt,
    expires_at: expiresAt,
    ...todo
  } = row;
  deps.tracing?.linkActive(traceparent);
  const { metrics } = deps;
  metrics?.asks.asked.inc();
  if (metrics && agent.endpointSlug !== undefined) {
    const labels = {
      endpoint: metrics.endpointLabel(agent.endpointSlug),
      queue: metrics.queueLabel(todo.queue),
      outcome: 'asked',
    };
    metrics.latency.run.observe(labels, runSeconds);
  }
  // The parked todo holds no in-flight slot any more (docs/design/admission.md).
  if (underPolicy) await reopenQueue(deps.db, todo.endpoint_id, todo.queue);
  deps.settled?.(todo.endpoint_id, claimer ?? agent.sessionId);
  deps.asked?.({
    endpointId: todo.endpoint_id,
    todo,
    question: data.question,
    choices: data.choices ?? null,
    askedAt,
    expiresAt,
    traceparent,
  });
  return { todo, expires_at: expiresAt.toISOString() };
}

/** Who answers: a human of the owner's side, named by their email on the answer. */
export interface Answerer {
  id: string;
  email: string;
}

/**
 * Answers the open question of a todo of the endpoint and puts it back in its queue. A
 * todo that is not waiting (never was, or another answer, the timeout or a cancel came
 * first) is `conflict`, saying what it is now; an unknown one `not_found`.
 */
export async function answerTodo(
  deps: TodoDeps,
  endpointId: string,
  id: string,
  who: Answerer,
  input: unknown,
): Promise<{ todo: Todo }> {
  const data = parseInput(answerInput, input ?? {});
  const ask = await openAsk(deps.db, endpointId, id);
  if (!ask) throw await notWaiting(deps, endpointId, id);
  const answer = checkAnswer(data, ask.choices);
  const row = await answerAsk(deps.db, {
    endpointId,
    id,
    ...answer,
    humanId: who.id,
    by: who.email,
    priority: RETURN_PRIORITY,
  });
  if (!row) throw await notWaiting(deps, endpointId, id);
  const { asked_at: askedAt, answered_at: answeredAt, ...todo } = row;
  deps.metrics?.asks.answered.inc();
  deps.metrics?.asks.answerLatency.observe(Math.max(0, (answeredAt.getTime() - askedAt.getTime()) / 1000));
  return { todo };
}

async function notWaiting(deps: TodoDeps, endpointId: string, id: string): Promise<AppError> {
  const row = await getRow(deps.db, { endpointId }, id);
  if (!row) return notFound('todo', id);
  return new AppError(
    'conflict',
    `cannot answer: the todo is no longer waiting on a human (it is ${row.state}); someone answered it, it timed ` +
      'out, or it was canceled',
    { id, state: row.state },
  );
}

/** The todo's ended questions, oldest first, for get_todo and todo show. */
export function answersOf(deps: TodoDeps, endpointId: string, id: string): Promise<TodoAnswer[]> {
  return todoAnswers(deps.db, endpointId, id);
}

/** How many waiting todos the "Needs you" view lists: a page a person works down, oldest first. */
export const NEEDS_YOU_SHOWN = 100;

/** The todos on the human's endpoints waiting on an answer, oldest question first (docs/board.md, "Needs you"). */
export function needsYou(deps: TodoDeps, humanId: string): Promise<WaitingTodo[]> {
  return waitingForHuman(deps.db, humanId, NEEDS_YOU_SHOWN);
}

export type { WaitingTodo };
