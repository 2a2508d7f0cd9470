// Notify hook series (docs/design/hooks-and-presence.md): notifications by type and
// outcome, attempts by result, hooks disabled by reason. Counted by the delivering
// instance after the fact; no hook, endpoint or todo id is ever a label. `metrics.hooks`,
// built once by the Metrics constructor.

import type { Counter, Registry } from 'prom-client';
import { combinations, counter, zero } from './define.js';

export interface HookCounters {
  /** outcome: delivered | failed | dropped (queue full). */
  notifications: Counter<'type' | 'outcome'>;
  /** result: 2xx | 3xx | 4xx | 5xx | network | refused (SSRF guard). */
  attempts: Counter<'result'>;
  disabled: Counter<'reason'>;
}

export function hookCounters(registry: Registry): HookCounters {
  const m: HookCounters = {
    notifications: counter(
      registry,
      'switchboard_notify_hook_notifications_total',
      'Notify hook notifications by type (todo.ready, todos.backlog, todo.waiting_on_human) and outcome (delivered, failed, dropped).',
      ['type', 'outcome'],
    ),
    attempts: counter(
      registry,
      'switchboard_notify_hook_attempts_total',
      'Notify hook HTTP attempts by result (2xx, 3xx, 4xx, 5xx, network, refused).',
      ['result'],
    ),
    disabled: counter(
      registry,
      'switchboard_notify_hooks_disabled_total',
      'Notify hooks disabled, by reason (consecutive_failures).',
      ['reason'],
    ),
  };
  zero(
    m.notifications,
    combinations({
      type: ['todo.ready', 'todos.backlog', 'todo.waiting_on_human'],
      outcome: ['delivered', 'failed', 'dropped'],
    }),
  );
  zero(m.attempts, combinations({ result: ['2xx', '3xx', '4xx', '5xx', 'network', 'refused'] }));
  zero(m.disabled, [{ reason: 'consecutive_failures' }]);
  return m;
}
