// Routing one event (docs/design/routing.md): from a webhook's stored routing and the
// provider's reading of a delivery to a Decision. Shared by the ingest, replay, the
// quarantine's release and the dry run, so all four decide alike.

import { AppError } from '../domain/errors.js';
import type { Rule, RuleDefault } from '../domain/routing.js';
import type { RuleInput } from './cel.js';
import { compiledFor, decide, DEFAULT_ROUTING_LIMITS, type Decision, type RoutingLimits } from './rules.js';

/** A webhook's routing as stored (store/webhooks.ts WebhookRouting). */
export interface StoredRouting {
  rules: Rule[];
  rules_default: RuleDefault;
  trusted_actors: string[] | null;
  trust_when: string | null;
}

/** No rules, route by default, no trust gate: a webhook deleted since, or one never given rules. */
export const NO_ROUTING: StoredRouting = { rules: [], rules_default: 'route', trusted_actors: null, trust_when: null };

/** What the rules see of an event: `type` and `actor` are "" when the provider names none. */
export function ruleInputOf(
  provider: string,
  reading: { kind: string | null; actor: string | null },
  headers: Record<string, string>,
  payload: unknown,
): RuleInput {
  return { event: { provider, type: reading.kind ?? '', actor: reading.actor ?? '', headers }, payload };
}

export function decideEvent(
  routing: StoredRouting,
  event: {
    provider: string;
    queue: string;
    reading: { kind: string | null; actor: string | null; title: string };
    headers: Record<string, string>;
    payload: unknown;
    priority: number | undefined;
  },
  limits: RoutingLimits = DEFAULT_ROUTING_LIMITS,
  opts: { asTrusted?: boolean } = {},
): Decision {
  let compiled;
  try {
    compiled = compiledFor(
      {
        rules: routing.rules,
        default: routing.rules_default,
        trustedActors: routing.trusted_actors,
        trustWhen: routing.trust_when,
      },
      limits,
    );
  } catch (err) {
    // Saved rules that no longer compile (a limit lowered since): fail closed, like a rule that errors.
    if (!(err instanceof AppError)) throw err;
    const field = typeof err.details?.field === 'string' ? err.details.field : 'rules';
    const rule = { id: 'default', name: 'default' };
    return {
      disposition: 'faulted',
      rule,
      field,
      error: err.message,
      trace: [{ step: 'fault', rule: 'default', field, error: err.message }],
    };
  }
  const input = ruleInputOf(event.provider, event.reading, event.headers, event.payload);
  const base = { queue: event.queue, title: event.reading.title, kind: event.reading.kind, priority: event.priority };
  return decide(compiled, input, base, limits, opts);
}
