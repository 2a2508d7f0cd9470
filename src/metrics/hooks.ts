// Notify hook series (docs/design/hooks-and-presence.md): notifications by type and
// outcome, attempts by result, hooks disabled by reason. Counted by the delivering
// instance after the fact; no hook, endpoint or todo id is ever a label.

import type { Counter } from 'prom-client';
import { Metrics } from './index.js';

export interface HookMetrics {
  /** outcome: delivered | failed | dropped (queue full). */
  notifications: Counter<'type' | 'outcome'>;
  /** result: 2xx | 3xx | 4xx | 5xx | network | refused (SSRF guard). */
  attempts: Counter<'result'>;
  disabled: Counter<'reason'>;
}

export function hookMetrics(metrics: Metrics): HookMetrics {
  const m: HookMetrics = {
    notifications: metrics.counter(
      'switchboard_notify_hook_notifications_total',
      'Notify hook notifications by type (todo.ready, todos.backlog) and outcome (delivered, failed, dropped).',
      ['type', 'outcome'],
    ),
    attempts: metrics.counter(
      'switchboard_notify_hook_attempts_total',
      'Notify hook HTTP attempts by result (2xx, 3xx, 4xx, 5xx, network, refused).',
      ['result'],
    ),
    disabled: metrics.counter(
      'switchboard_notify_hooks_disabled_total',
      'Notify hooks disabled, by reason (consecutive_failures).',
      ['reason'],
    ),
  };
  metrics.zero(
    m.notifications,
    Metrics.combinations({ type: ['todo.ready', 'todos.backlog'], outcome: ['delivered', 'failed', 'dropped'] }),
  );
  metrics.zero(m.attempts, Metrics.combinations({ result: ['2xx', '3xx', '4xx', '5xx', 'network', 'refused'] }));
  metrics.zero(m.disabled, [{ reason: 'consecutive_failures' }]);
  return m;
}
