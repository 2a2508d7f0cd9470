// Instance liveness. The heartbeat is not a claimed sweep: every instance beats its own
// `instances` row on its own timer. The dead-instance sweep is an ordinary claimed sweep:
// one instance per tick looks for rows whose beat is older than the threshold, closes the
// streams they held (rings, rotation and presence then skip them) and rings again, at
// once, the todos whose latest ring went there; messages in flight on those streams go
// back to pending. Without this a killed instance's streams stayed "open" and its rings
// were lost until the 5-minute re-ring.

import type { Logger } from 'pino';
import { withTx, type Pool } from '../db/pool.js';
import {
  beat,
  reapDeadInstances,
  reapPredecessor,
  removeInstance,
  type DeadInstances,
  type InstanceInfo,
} from '../store/instances.js';
import { returnSessionToPending } from '../messages/delivery.js';
import type { MessageDeps } from '../messages/context.js';
import type { Sweep } from './runner.js';

/** What is told about released sessions and queues: the doorbell and the message queue. */
export interface Redelivery {
  /** A queue of the endpoint has todos due a ring again. */
  ring(endpointId: string, queue: string): Promise<void>;
  messages: MessageDeps;
  /**
   * Rings through a dead instance are given back from this long before its last beat on
   * (one heartbeat interval): earlier ones were written while it was alive, and the
   * heartbeat re-ring covers their todos, so the sweep never walks the whole rung backlog.
   */
  ringMarginMs: number;
}

/** Rings again and returns in-flight messages for what a dead instance held. */
async function redeliver(released: DeadInstances, to: Redelivery): Promise<void> {
  for (const s of released.sessions) await returnSessionToPending(to.messages, s);
  for (const q of released.queues) await to.ring(q.endpointId, q.queue);
}

export interface HeartbeatOptions {
  db: Pool;
  info: InstanceInfo;
  intervalMs: number;
  log: Logger;
  /** Called when this instance's row had been deleted as dead while it was alive (a long stall). */
  onRevived: () => Promise<void>;
}

export class InstanceHeartbeat {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private running = false;
  private failing = false;
  /** When the current run of successful beats began (ms); null while beats fail. */
  private healthySince: number | null = null;

  constructor(private readonly options: HeartbeatOptions) {}

  /**
   * The first beat, at start: releases what an earlier process under the same id left
   * behind if it died, then inserts this instance's row. Throws if the database fails.
   */
  async start(redelivery: Redelivery): Promise<DeadInstances> {
    const released = await withTx(this.options.db, (tx) =>
      reapPredecessor(tx, this.options.info.id, redelivery.ringMarginMs),
    );
    await beat(this.options.db, this.options.info);
    this.healthySince = Date.now();
    if (released.instances.length > 0) {
      this.options.log.warn(
        { instance: this.options.info.id, streams: released.sessions.length, queues: released.queues.length },
        'an earlier process with this instance id did not shut down cleanly; its streams are closed and its rings rung again',
      );
      await redeliver(released, redelivery).catch((err: unknown) =>
        this.options.log.error({ err }, 'ringing again after an unclean predecessor failed'),
      );
    }
    this.running = true;
    this.schedule();
    return released;
  }

  /** Stops beating and deletes this instance's row (its streams are already marked closed). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight;
    await removeInstance(this.options.db, this.options.info.id);
  }

  /** One beat; errors are logged once per outage and never thrown. */
  async beatOnce(): Promise<void> {
    try {
      const inserted = await beat(this.options.db, this.options.info);
      if (this.failing) this.options.log.info('instance heartbeat written again');
      this.failing = false;
      this.healthySince ??= Date.now();
      if (inserted) {
        this.options.log.warn(
          { instance: this.options.info.id },
          'this instance was taken for dead (no heartbeat in time); marking its streams open again',
        );
        await this.options.onRevived();
      }
    } catch (err) {
      if (!this.failing) this.options.log.warn({ err }, 'instance heartbeat failed; retrying every beat');
      this.failing = true;
      this.healthySince = null;
    }
  }

  /**
   * How long this instance has been beating without a failure (0 while failing). After a
   * database outage every instance's beat is stale at once; judging others is fair only
   * once they have had a full threshold to beat again.
   */
  healthyForMs(): number {
    return this.healthySince === null ? 0 : Date.now() - this.healthySince;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.inFlight = this.beatOnce().finally(() => {
        this.inFlight = null;
        this.schedule();
      });
    }, this.options.intervalMs);
  }
}

/** The claimed sweep that finds dead instances; runs every heartbeat interval. */
export function deadInstanceSweep(
  db: Pool,
  a: {
    intervalMs: number;
    deadAfterMs: number;
    redelivery: Redelivery;
    log: Logger;
    /** This instance's heartbeat: never judged dead by itself, and no judging until it has beaten for a threshold. */
    heartbeat: InstanceHeartbeat;
    instanceId: string;
  },
): Sweep {
  return {
    name: 'dead_instances',
    intervalMs: a.intervalMs,
    async run() {
      if (a.heartbeat.healthyForMs() < a.deadAfterMs) return;
      const released = await withTx(db, (tx) =>
        reapDeadInstances(tx, a.deadAfterMs, a.instanceId, a.redelivery.ringMarginMs),
      );
      if (released.instances.length === 0) return;
      a.log.warn(
        { instances: released.instances, streams: released.sessions.length },
        `instance(s) ${released.instances.join(', ')} stopped beating; their streams are closed and their rings rung again`,
      );
      await redeliver(released, a.redelivery);
      return {
        dead: released.instances.length,
        streams_closed: released.sessions.length,
        queues_rerung: released.queues.length,
      };
    },
  };
}
