// The session message queue's series (docs/design/message-queue.md). Counted after the
// transaction that did the thing commits. Built once per Metrics registry (a second call
// returns the same counters), so every part of one process counts into the same series.

import type { Counter } from 'prom-client';
import { Metrics } from './index.js';

export type RemoveAction = 'remove' | 'clear';

export interface MessageMetrics {
  added: Counter<'queued_by'>;
  removed: Counter<'action'>;
  delivered: Counter;
  acknowledged: Counter;
  redelivered: Counter;
  rejected: Counter<'reason'>;
}

const built = new WeakMap<Metrics, MessageMetrics>();

export function messageMetrics(metrics: Metrics): MessageMetrics {
  const known = built.get(metrics);
  if (known) return known;
  const m: MessageMetrics = {
    added: metrics.counter('switchboard_message_queue_added_total', 'Messages queued into sessions, by provenance.', [
      'queued_by',
    ]),
    removed: metrics.counter(
      'switchboard_message_queue_removed_total',
      'Pending messages removed by a person, by action (remove, clear).',
      ['action'],
    ),
    delivered: metrics.counter(
      'switchboard_message_queue_delivered_total',
      'Messages handed to an agent: written to its stream or returned by next_message (redeliveries included).',
    ),
    acknowledged: metrics.counter(
      'switchboard_message_queue_acknowledged_total',
      'Messages acknowledged (ack_message).',
    ),
    redelivered: metrics.counter(
      'switchboard_message_queue_redelivered_total',
      'Deliveries of a message that had been handed out before and was never acknowledged.',
    ),
    rejected: metrics.counter(
      'switchboard_message_queue_rejected_total',
      'Messages refused at admission, by reason (queue_full).',
      ['reason'],
    ),
  };
  metrics.zero(m.added, Metrics.combinations({ queued_by: ['user', 'agent', 'workflow', 'server'] }));
  metrics.zero(m.removed, Metrics.combinations({ action: ['remove', 'clear'] }));
  metrics.zero(m.rejected, [{ reason: 'queue_full' }]);
  built.set(metrics, m);
  return m;
}
