// Webhook intake series (docs/design/intake.md, "Limits and metrics"): deliveries by
// provider and verdict, and verification failures by provider and reason. Counted by the
// instance that answered, after the fact; no webhook, endpoint or actor id is ever a
// label. `metrics.webhooks`, built once by the Metrics constructor.

import type { Counter, Registry } from 'prom-client';
import { combinations, counter, zero } from './define.js';

export const DELIVERY_VERDICTS = ['accepted', 'duplicate', 'rejected', 'invalid', 'rate_limited', 'challenge'] as const;
/** What routing did with an accepted event (docs/design/routing.md). */
export const DISPOSITIONS = ['routed', 'duplicate', 'dropped', 'quarantined', 'faulted'] as const;
/** A human's (or a granted agent's) decision; expiry is the routing_retention sweep's count. */
export const QUARANTINE_OUTCOMES = ['released', 'discarded'] as const;
export const VERIFY_REASONS = ['missing_signature', 'malformed_signature', 'stale_timestamp', 'bad_signature'] as const;
const PROVIDER_LABELS = ['token', 'github', 'gitlab', 'gitea', 'stripe', 'slack', 'standard'];

export interface WebhookCounters {
  /**
   * verdict: accepted (a new event) | duplicate (a redelivery) | rejected (failed
   * verification) | invalid (an unreadable body) | rate_limited | challenge (Slack's handshake).
   */
  deliveries: Counter<'provider' | 'verdict'>;
  verifyFailures: Counter<'provider' | 'reason'>;
  /** Accepted events (deliveries, replays, releases) by what routing did with them. */
  dispositions: Counter<'disposition'>;
  /** Quarantined items ended by a reviewer, by outcome (released, discarded). */
  quarantineResolved: Counter<'outcome'>;
}

export function webhookCounters(registry: Registry): WebhookCounters {
  const m: WebhookCounters = {
    deliveries: counter(
      registry,
      'switchboard_webhook_deliveries_total',
      'Webhook deliveries by provider and verdict (accepted, duplicate, rejected, invalid, rate_limited, challenge).',
      ['provider', 'verdict'],
    ),
    verifyFailures: counter(
      registry,
      'switchboard_webhook_verify_failures_total',
      'Webhook deliveries refused by signature verification, by provider and reason.',
      ['provider', 'reason'],
    ),
    dispositions: counter(
      registry,
      'switchboard_webhook_events_total',
      'Webhook events by disposition: routed, duplicate (a work order held), dropped, quarantined, faulted (a rule errored).',
      ['disposition'],
    ),
    quarantineResolved: counter(
      registry,
      'switchboard_quarantine_resolved_total',
      'Quarantined webhook events ended by a reviewer, by outcome (released, discarded).',
      ['outcome'],
    ),
  };
  zero(m.dispositions, combinations({ disposition: [...DISPOSITIONS] }));
  zero(m.quarantineResolved, combinations({ outcome: [...QUARANTINE_OUTCOMES] }));
  zero(m.deliveries, combinations({ provider: PROVIDER_LABELS, verdict: [...DELIVERY_VERDICTS] }));
  zero(m.verifyFailures, combinations({ provider: PROVIDER_LABELS.slice(1), reason: [...VERIFY_REASONS] }));
  return m;
}
