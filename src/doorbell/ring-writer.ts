// The per-instance ring writer (docs/design/doorbell-acknowledgement.md, "The ring
// writer"): records each doorbell this instance delivered (wrote to a stream) as a
// doorbell_rings row, asynchronously and in batches. The pump hands it a ring after a
// successful write and goes on: record() never waits and never throws. The buffer is
// bounded; on overflow, or when an insert fails, the record is dropped and counted. A
// lost record only under-reports (the ring was still delivered); it never blocks or loses
// a doorbell. Test rings are not buffered: the self-test needs its row before it can
// report, so it inserts its own (src/doorbell/self-test.ts).

import type { Logger } from 'pino';
import type { Queryable } from '../db/pool.js';
import type { DoorbellCounters } from '../metrics/doorbell.js';
import type { Metrics } from '../metrics/index.js';
import { insertRings, type RingKind, type RingRecord } from '../store/doorbell-rings.js';

/** A ring as the pump delivered it: ring_id was minted before the write and is in meta. */
export interface DeliveredRing {
  id: string;
  endpointId: string;
  sessionId: string;
  todoId: string | null;
  kind: RingKind;
  queue: string | null;
  synthetic: boolean;
  /** The todo's claim count when it was rung (0 for a digest or a self-test's fresh todo). */
  claimsBefore: number;
  /** Set for a self-test ring: the test it belongs to. */
  testId?: string;
  /** When the write returned (ms since the epoch), stamped by the pump: sent_at is derived from it. */
  writtenAt?: number;
}

/** What the pump tells after each write attempt; both calls return at once. */
export interface RingRecorder {
  delivered(ring: DeliveredRing): void;
  failed(ring: DeliveredRing): void;
}

// Ten thousand records is minutes of rings at any real rate (each todo rings at most six
// times); a buffer that full means the database is down, and growing it would only hold
// more memory for rows that cannot be written anyway.
const CAPACITY = 10_000;
// One INSERT per hundred rings keeps the statement small and a burst to a few round trips.
const BATCH = 100;
// A full buffer is logged at most once a minute; the counter carries the exact number.
const WARN_EVERY_MS = 60_000;

export interface RingWriterDeps {
  db: Queryable;
  log: Logger;
  metrics?: DoorbellCounters;
  /**
   * switchboard_doorbell_delivery_seconds for a ring whose claim came before its record:
   * that claim found no row to acknowledge, so the insert that records it acknowledged is
   * the one place that sees both instants (Metrics.doorbellDelivered).
   */
  deliveries?: Pick<Metrics, 'doorbellDelivered'>;
  capacity?: number;
}

export class RingRowWriter {
  private readonly buffer: Array<{ ring: DeliveredRing; at: number }> = [];
  private draining: Promise<void> | null = null;
  private lastWarnAt = 0;
  /** Records inserted and dropped by this instance, for tests and the shutdown line. */
  readonly stats = { inserted: 0, dropped: 0 };

  constructor(private readonly deps: RingWriterDeps) {}

  /** Queues one delivered ring; false (counted) when the buffer is full. Never blocks. */
  record(ring: DeliveredRing): boolean {
    if (this.buffer.length >= (this.deps.capacity ?? CAPACITY)) {
      this.drop('overflow', 1);
      return false;
    }
    this.buffer.push({ ring, at: ring.writtenAt ?? Date.now() });
    this.kick();
    return true;
  }

  /** Resolves once every record queued so far has been inserted or dropped. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private kick(): void {
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      if (this.buffer.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, BATCH);
      const now = Date.now();
      try {
        const rows = await insertRings(
          this.deps.db,
          batch.map(({ ring, at }) => toRecord(ring, now - at)),
        );
        this.stats.inserted += rows.length;
        this.deps.metrics?.sent(rows);
        this.deps.metrics?.acked(
          rows.filter((r) => r.acked),
          'claim',
        );
        for (const { delivery, synthetic } of rows) {
          if (delivery && !synthetic) {
            this.deps.deliveries?.doorbellDelivered(delivery.endpoint_slug, delivery.queue, delivery.delivery_seconds);
          }
        }
      } catch (err) {
        this.drop('error', batch.length, err);
      }
    }
  }

  private drop(reason: 'overflow' | 'error', n: number, err?: unknown): void {
    this.stats.dropped += n;
    this.deps.metrics?.dropped.inc({ reason }, n);
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.lastWarnAt = now;
    this.deps.log.warn(
      { err, reason, dropped: n },
      'doorbell ring records dropped: the doorbells were delivered, but whether they were heard will be under-reported',
    );
  }
}

export function toRecord(ring: DeliveredRing, ageMs: number): RingRecord {
  return {
    id: ring.id,
    endpointId: ring.endpointId,
    sessionId: ring.sessionId,
    todoId: ring.todoId,
    kind: ring.kind,
    queue: ring.queue,
    synthetic: ring.synthetic,
    ageMs,
    claimsBefore: ring.claimsBefore,
  };
}
