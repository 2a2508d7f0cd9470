// The ask-a-human series (docs/design/ask-human.md, docs/metrics.md): questions asked,
// answered and timed out, and how long a person took to answer. Counted by the instance
// that committed the transition, after commit; the timeout sweep counts its own.

import { Histogram, type Registry } from 'prom-client';
import { counter } from './define.js';

/**
 * Answer latency, seconds: a person answers in a minute at a desk, in hours overnight;
 * the top bucket is the default maximum timeout (a week), past which nobody answers.
 */
const ANSWER_BUCKETS = [10, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86_400, 3 * 86_400, 7 * 86_400];

export function askCounters(registry: Registry) {
  return {
    asked: counter(registry, 'switchboard_todos_asked_total', 'Todos an agent parked on a question to a human.'),
    answered: counter(registry, 'switchboard_todos_answered_total', 'Questions to a human answered.'),
    timedOut: counter(
      registry,
      'switchboard_todos_ask_timed_out_total',
      'Questions to a human that timed out unanswered (the todo went back to its queue).',
    ),
    answerLatency: new Histogram({
      name: 'switchboard_ask_answer_seconds',
      help: 'Seconds from an agent asking a human to the answer.',
      buckets: ANSWER_BUCKETS,
      registers: [registry],
    }),
  };
}

export type AskCounters = ReturnType<typeof askCounters>;
