// Builds one instance's notify hook delivery and presence service and subscribes them to
// the bus; the composition root calls this once and stops it on shutdown.

import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import type { Metrics } from '../metrics/index.js';
import { PresenceService, type DigestSender } from '../presence/digest.js';
import { hookSweep } from '../sweeps/hooks.js';
import { presenceSweep } from '../sweeps/presence.js';
import type { Sweep } from '../sweeps/runner.js';
import { HookDelivery } from './delivery.js';
import type { HookGuard } from './guard.js';
import { NotifyHooks } from './notify.js';
import type { Bus } from '../domain/events.js';

export interface PushServices {
  delivery: HookDelivery;
  hooks: NotifyHooks;
  presence: PresenceService;
  sweeps: Sweep[];
  stop(): Promise<void>;
}

export function startHooksAndPresence(a: {
  db: Pool;
  log: Logger;
  bus: Bus;
  doorbell: DigestSender;
  guard: HookGuard;
  metrics?: Metrics;
  ca?: string;
  backoffMs?: number[];
  version?: string;
}): PushServices {
  const delivery = new HookDelivery({
    db: a.db,
    guard: a.guard,
    log: a.log,
    ...(a.metrics ? { metrics: a.metrics.hooks } : {}),
    ...(a.ca ? { ca: a.ca } : {}),
    ...(a.backoffMs ? { backoffMs: a.backoffMs } : {}),
    ...(a.version ? { version: a.version } : {}),
  });
  const hooks = new NotifyHooks({ db: a.db, log: a.log, delivery });
  const presence = new PresenceService({ db: a.db, log: a.log, doorbell: a.doorbell, hooks });
  const offs = [hooks.listen(a.bus), presence.listen(a.bus)];
  return {
    delivery,
    hooks,
    presence,
    sweeps: [presenceSweep(presence), hookSweep(hooks)],
    async stop() {
      offs.forEach((off) => off());
      await delivery.stop();
    },
  };
}
