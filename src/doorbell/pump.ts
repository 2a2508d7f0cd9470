// The doorbell pump: turns "work is ready" into one `notifications/claude/channel` on one
// session's stream. The queue is the ledger and a ring is a lossy hint, so nothing here
// retries a lost write; the heartbeat re-ring and ring-on-attach cover what is missed.
//
// Who rings: every instance hears todo_ready, and the ring statement claims each todo's
// ring under a row lock, so exactly one instance rings it. Which session: one ring per idle
// agent (docs/design/doorbell-acknowledgement.md, "Who is rung") — a session that declared
// claude/channel, holds no claim and has no unanswered ring, rung longest ago first; work
// that finds none stays due and rings the next session to become idle (a settled claim
// here, the heartbeat sweep, an attach). Who writes: the instance holding that stream;
// another instance forwards the ring with a `ring` notice. Budget: a creation ring plus at
// most MAX_RINGS - 1 more per todo (requeues, re-rings at 5 min, 20 min, 1 h, 6 h, attach).

import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { newId } from '../domain/ids.js';
import { claimRings, endpointsWithOpenStreams, publishRing, type RingReason, type RungTodo } from '../store/rings.js';
import { answerRing } from '../store/ring-targets.js';
import { IDLE_GRACE_MS, IdleChecks } from './idle.js';
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
// Sessions rung per statement (one todo each): a burst of creates rings every idle session
// of an endpoint in a round trip or two, and no statement holds many locks while claimers run.
const BATCH = 16;
/** SWITCHBOARD_DOORBELL_ACK_WINDOW's default: how long a ring stays unanswered. */
const DEFAULT_ACK_WINDOW_MS = 15 * 60_000;
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
  /** SWITCHBOARD_DOORBELL_ACK_WINDOW: a ring unanswered for longer no longer keeps its session from the next. */
  ackWindowMs?: number;
  /** IDLE_GRACE_MS unless a test shortens it. */
  idleGraceMs?: number;
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
  /** Per session that settled a claim here: the idle check waiting out the grace. */
  private readonly idle: IdleChecks;
  /** Passes running, by endpoint and reason: a notice meanwhile runs the pass once more after. */
  private readonly running = new Map<string, { again: boolean; done: Promise<void> }>();

  constructor(private readonly deps: DoorbellDeps) {
    this.idle = new IdleChecks(deps.idleGraceMs ?? IDLE_GRACE_MS, (e, s) => this.idleCheck(e, s));
  }

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

  /**
   * The heartbeat sweep over every endpoint with an open stream (the due work is found per
   * endpoint): the re-ring of old pending work, then work never rung because every session
   * was busy, for the sessions idle now (a ring unanswered past the ack window included).
   */
  async rering(): Promise<{ rung: number }> {
    const before = this.claimed;
    const reason: RingReason = { kind: 'rering', scheduleSeconds: RERING_SCHEDULE_SECONDS };
    for (const endpointId of await endpointsWithOpenStreams(this.deps.db)) {
      await this.pass(endpointId, reason, BATCH, true);
      await this.pass(endpointId, { kind: 'waiting' }, BATCH, true);
    }
    return { rung: this.claimed - before };
  }

  /**
   * A session settled a claim (complete, fail, release) through this instance: unless it
   * settles again within the grace (it is draining the queue, and claims between), it is
   * then rung for work that waits — it answered its last ring by claiming since.
   */
  settled(endpointId: string, sessionId: string): void {
    this.idle.settled(endpointId, sessionId);
  }

  private async idleCheck(endpointId: string, sessionId: string): Promise<void> {
    const graceSeconds = (this.deps.idleGraceMs ?? IDLE_GRACE_MS) / 1000;
    try {
      await answerRing(this.deps.db, { endpointId, sessionId, graceSeconds });
    } catch (err) {
      this.deps.log.error({ err, endpoint: endpointId, session: sessionId }, 'doorbell idle check failed');
      return;
    }
    await this.pass(endpointId, { kind: 'waiting', sessionId }, 1, false);
  }

  /** Drops the idle checks not yet due (shutdown: nothing new starts once the streams close). */
  stop(): void {
    this.idle.stop();
  }

  /**
   * Waits for every pass under way and every idle check pending, the rings and holds they
   * decide included (shutdown, after stop(): before the pool closes under them; tests:
   * before the next step reads what they did).
   */
  async settle(): Promise<void> {
    for (;;) {
      const pending = [...this.passes, ...this.idle.pending()];
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  /**
   * Runs a pass, or, when the same pass is running here, asks it to run once more after
   * (a fresh snapshot sees what the notice announced): a burst of notices costs two passes.
   */
  private pass(endpointId: string, reason: RingReason, limit: number, drain: boolean): Promise<void> {
    const key = JSON.stringify([endpointId, reason]);
    const current = this.running.get(key);
    if (current) {
      current.again = true;
      return current.done;
    }
    const state = { again: true, done: Promise.resolve() };
    const loop = async () => {
      while (state.again) {
        state.again = false;
        await this.run(endpointId, reason, limit, drain);
      }
      this.running.delete(key);
    };
    const pass = loop().finally(() => this.passes.delete(pass));
    state.done = pass;
    this.running.set(key, state);
    this.passes.add(pass);
    return pass;
  }

  private async run(endpointId: string, reason: RingReason, limit: number, drain: boolean): Promise<void> {
    try {
      // Deferred queues never ring (docs/design/admission.md); their work is held until the reopen.
      const deferred = await holdDeferred(this.deps.db, endpointId);
      const args = {
        endpointId,
        maxRings: MAX_RINGS,
        limit,
        reason,
        deferredQueues: deferred,
        ackWindowSeconds: (this.deps.ackWindowMs ?? DEFAULT_ACK_WINDOW_MS) / 1000,
      };
      for (;;) {
        // One statement decides who is idle and rings them (store/rings.ts): an attach rings
        // its own session whatever it holds.
        const rung = await claimRings(this.deps.db, args);
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
