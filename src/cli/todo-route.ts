// `switchboard todo show`'s route section (docs/design/routing.md, "The trace"): for a todo
// a webhook event made, the event, what routing did with it, the rule that matched (its
// name and position) and the trace steps that concern this todo, as GET /api/v1/todos/{id}
// answers them. --json prints the answer's `route` as it is.

import { stepFields } from '../domain/routing.js';
import { keyValues, section, table } from './output.js';

/** A todo's `route` as the API answers it. */
export interface TodoRoute {
  event_id: string;
  disposition: string;
  steps: Record<string, unknown>[];
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);

/** "name (rules[2], rl_…)", or the default when no rule matched. */
function ruleText(steps: Record<string, unknown>[]): string | null {
  const made = steps.find((s) => s.step === 'route');
  const decide = steps.find((s) => s.step === 'decide');
  const id = str(made?.rule) ?? str(decide?.rule);
  if (id === 'default') return "none matched: the webhook's default";
  const matched = steps.find((s) => s.step === 'rule' && s.rule_id === id) ?? steps.find((s) => s.step === 'rule');
  if (!matched) return id;
  const position = typeof matched.position === 'number' ? `rules[${matched.position}], ` : '';
  return `${str(matched.name) || 'unnamed'} (${position}${str(matched.rule_id) ?? ''})`;
}

/** One step's fields after its kind: `name: value` (objects and lists as JSON), " · " between them. */
function detail(s: Record<string, unknown>): string {
  return stepFields(s)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');
}

/** The section, or '' for a todo no webhook event made. */
export function routeText(route: TodoRoute | undefined): string {
  if (!route) return '';
  const steps = route.steps.filter((s) => typeof s === 'object' && s !== null);
  const head = keyValues([
    ['event', route.event_id],
    ['disposition', route.disposition],
    ['rule', ruleText(steps)],
  ]);
  const rows = table(
    steps,
    [
      { header: 'STEP', value: (s) => s.step },
      { header: 'DETAIL', value: (s) => detail(s), max: 160 },
    ],
    '(no trace steps kept)',
  );
  return section('Route:', head + rows);
}
