// The doorbell pump: turns "work is ready" into one `notifications/claude/channel` on one
// session's stream. The queue is the ledger and a ring is a lossy hint, so nothing here
// retries a lost write; the heartbeat re-ring and ring-on-attach cover what is missed.
//
// Who rings: every instance hears todo_ready, and the ring statement claims each todo's
// ring under a row lock, so exactly one instance rings it. Which session: the endpoint's
// open stream rung longest ago (rotation). Who writes: the instance holding that stream;
// another instance forwards the ring with a `ring` notice. Budget: a creation ring plus at
// most MAX_RINGS - 1 more per todo (requeues, re-rings at 5 min, 20 min, 1 h, 6 h, attach).

import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { newId } from '../domain/ids.js';
import { claimRings, endpointsWithOpenStreams, publishRing, type RingReason, type RungTodo } from '../store/rings.js';
import { holdDeferred } from '../budgets/gate.js';
import { ringParams, type ChannelParams } from './content.js';
import type { DeliveredRing, RingRecorder } from './ring-writer.js';
import type { Bus } from '../domain/events.js';
import { NO_TRACING, type Tracing } from '../tracing/index.js';

/** A creation ring plus at most five more per todo (docs/design/doorbell-acknowledgement.md, "Rings"). */
export const MAX_RINGS = 6;
/** Heartbeat re-rings of still-pending work, by age: 5 min, 20 min, 1 h, 6 h. */
export const RERING_SCHEDULE_SECONDS = [300, 1200, 3600, 21_600];
/** A stream that just opened hears about at most this many waiting todos. */
export const ATTACH_RINGS = 3;
// Rings claimed per statement: a burst of creates rings in a few round trips, and no
// statement holds many todo locks while claimers run.
const BATCH = 16;
// Consecutive failed writes to one session before a warning (once per session per run).
const DEAF_AFTER = 3;

export interface RingWriter {
  /** Writes the notification to this instance's stream of the session; false when it cannot. */
  ring(sessionId: string, params: ChannelParams): Promise<boolean>;
}

export interface DoorbellDeps {
  db: Pool;
  instanceId: string;
  log: Logger;
  writer: RingWriter;
  /**
   * Told after each write (a ring row only for a successful write,
   * docs/design/doorbell-acknowledgement.md); optional in unit tests.
   */
  recorder?: RingRecorder;
  /**
   * A span per ring, linked to the rung todo's trace (docs/design/tracing.md, "A todo's
   * trace"); absent: untraced.
   */
  tracing?: Tracing;
}

export class Doorbell {
  private readonly failures = new Map<string, number>();
  private readonly warned = new Set<string>();
  /** Rings written by this instance (any session), for tests and metrics. */
  written = 0;
  /** Rings this instance claimed: written here or forwarded to the stream's instance. */
  private claimed = 0;
  /** Passes under way, for settle(). */
  private readonly passes = new Set<Promise<void>>();

  constructor(private readonly deps: DoorbellDeps) {}

  /** Reacts to todo_ready from any instance, and writes rings forwarded to this instance. */
  listen(bus: Bus): () => void {
    const offs = [
      bus.subscribe('todo_ready', (e) => {
        void (e.reopen === true ? this.reopened(e.endpoint_id, e.queue) : this.ready(e.endpoint_id, e.queue));
      }),
      bus.subscribe('ring', (e) => {
        if (e.instance === this.deps.instanceId) {
          void this.write(e.session_id, e.params as ChannelParams, e.ring as DeliveredRing | undefined);
        }
      }),
    ];
    return () => offs.forEach((off) => off());
  }

  /** Work became ready on a queue: ring it, batch by batch. */
  ready(endpointId: string, queue: string): Promise<void> {
    return this.pass(endpointId, { kind: 'ready', queue }, BATCH, true);
  }

  /** A budgeted queue admits again (the reopen, docs/design/admission.md): ring its waiting work once. */
  reopened(endpointId: string, queue: string): Promise<void> {
    return this.pass(endpointId, { kind: 'reopen', queue }, BATCH, false);
  }

  /** A session opened its stream here: ring it for a few waiting todos. */
  attached(endpointId: string, sessionId: string): Promise<void> {
    return this.pass(endpointId, { kind: 'attach', sessionId }, ATTACH_RINGS, false);
  }

  /** The heartbeat re-ring over every endpoint with an open stream (the due work is found per endpoint). */
  async rering(): Promise<{ rung: number }> {
    const before = this.claimed;
    const reason: RingReason = { kind: 'rering', scheduleSeconds: RERING_SCHEDULE_SECONDS };
    for (const endpointId of await endpointsWithOpenStreams(this.deps.db)) {
      await this.pass(endpointId, reason, BATCH, true);
    }
    return { rung: this.claimed - before };
  }

  /**
   * Waits for every pass under way, the rings and holds they decide included (shutdown:
   * before the pool closes under them; tests: before the next step reads what they did).
   */
  async settle(): Promise<void> {
    while (this.passes.size > 0) await Promise.all([...this.passes]);
  }

  private pass(endpointId: string, reason: RingReason, limit: number, drain: boolean): Promise<void> {
    const pass = this.run(endpointId, reason, limit, drain).finally(() => this.passes.delete(pass));
    this.passes.add(pass);
    return pass;
  }

  private async run(endpointId: string, reason: RingReason, limit: number, drain: boolean): Promise<void> {
    try {
      // Deferred queues never ring (docs/design/admission.md); their work is held until the reopen.
      const deferred = await holdDeferred(this.deps.db, endpointId);
      for (;;) {
        const rung = await claimRings(this.deps.db, {
          endpointId,
          maxRings: MAX_RINGS,
          limit,
          reason,
          deferredQueues: deferred,
        });
        for (const todo of rung) await this.deliver(endpointId, todo);
        if (!drain || rung.length < limit) return;
      }
    } catch (err) {
      this.deps.log.error({ err, endpoint: endpointId, reason: reason.kind }, 'doorbell pass failed');
    }
  }

  private async deliver(endpointId: string, todo: RungTodo): Promise<void> {
    const ring: DeliveredRing = {
      id: newId('rg'),
      endpointId,
      sessionId: todo.session_id,
      todoId: todo.id,
      kind: 'todo',
      queue: todo.queue,
      synthetic: false,
      claimsBefore: todo.claims,
    };
    this.claimed += 1;
    const tracing = this.deps.tracing ?? NO_TRACING;
    if (!tracing.enabled) return this.send(ring, ringParams(todo, ring.id), todo.instance);
    // Its own trace (a ring follows a notification, not a request), linked to the todo's.
    await tracing.run(
      'doorbell ring',
      {
        root: true,
        links: [todo.traceparent],
        attributes: {
          'switchboard.todo': todo.id,
          'switchboard.queue': todo.queue,
          'switchboard.ring': ring.id,
          'switchboard.forwarded': todo.instance !== this.deps.instanceId,
        },
      },
      () => this.send(ring, ringParams(todo, ring.id), todo.instance),
    );
  }

  /** Writes a ring here when this instance holds the stream, else hands it to `instance`. */
  async send(ring: DeliveredRing, params: ChannelParams, instance: string): Promise<void> {
    if (instance === this.deps.instanceId) {
      await this.write(ring.sessionId, params, ring);
    } else {
      await publishRing(this.deps.db, {
        instance,
        endpoint_id: ring.endpointId,
        session_id: ring.sessionId,
        params,
        ring,
      });
    }
  }

  private async write(sessionId: string, params: ChannelParams, ring?: DeliveredRing): Promise<void> {
    let ok = false;
    try {
      ok = await this.deps.writer.ring(sessionId, params);
    } catch (err) {
      this.deps.log.debug({ err, session: sessionId }, 'doorbell write failed');
    }
    if (ring) {
      if (ok) this.deps.recorder?.delivered({ ...ring, writtenAt: Date.now() });
      else this.deps.recorder?.failed(ring);
    }
    if (ok) {
      this.written += 1;
      this.failures.delete(sessionId);
      this.deps.log.debug(
        { session: sessionId, ring: params.meta.ring_id },
        'doorbell delivered (written, not yet heard)',
      );
      return;
    }
    const failures = (this.failures.get(sessionId) ?? 0) + 1;
    this.failures.set(sessionId, failures);
    if (failures >= DEAF_AFTER && !this.warned.has(sessionId)) {
      this.warned.add(sessionId);
      this.deps.log.warn({ session: sessionId, failures }, 'doorbell writes to this session keep failing');
    }
  }
}
