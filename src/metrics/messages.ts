// The session message queue's series (docs/design/message-queue.md). Counted after the
// transaction that did the thing commits. `metrics.messages`, built once by the Metrics
// constructor, so every part of one process counts into the same series.

import type { Counter, Registry } from 'prom-client';
import { combinations, counter, zero } from './define.js';

export type RemoveAction = 'remove' | 'clear';

export interface MessageCounters {
  added: Counter<'queued_by'>;
  removed: Counter<'action'>;
  delivered: Counter;
  acknowledged: Counter;
  redelivered: Counter;
  rejected: Counter<'reason'>;
}

export function messageCounters(registry: Registry): MessageCounters {
  const m: MessageCounters = {
    added: counter(registry, 'switchboard_message_queue_added_total', 'Messages queued into sessions, by provenance.', [
      'queued_by',
    ]),
    removed: counter(
      registry,
      'switchboard_message_queue_removed_total',
      'Pending messages removed by a person, by action (remove, clear).',
      ['action'],
    ),
    delivered: counter(
      registry,
      'switchboard_message_queue_delivered_total',
      'Messages handed to an agent: written to its stream or returned by next_message (redeliveries included).',
    ),
    acknowledged: counter(
      registry,
      'switchboard_message_queue_acknowledged_total',
      'Messages acknowledged (ack_message).',
    ),
    redelivered: counter(
      registry,
      'switchboard_message_queue_redelivered_total',
      'Deliveries of a message that had been handed out before and was never acknowledged.',
    ),
    rejected: counter(
      registry,
      'switchboard_message_queue_rejected_total',
      'Messages refused at admission, by reason (queue_full).',
      ['reason'],
    ),
  };
  zero(m.added, combinations({ queued_by: ['user', 'agent', 'workflow', 'server'] }));
  zero(m.removed, combinations({ action: ['remove', 'clear'] }));
  zero(m.rejected, [{ reason: 'queue_full' }]);
  return m;
}
