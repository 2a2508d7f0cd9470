// The self-test's ring phase. Every instance hears `doorbell_test` when a test starts and
// tries to ring it RING_DELAY_MS later; takeTestRing lets exactly one instance take it.
// The taking instance picks the session (the test's own, else the endpoint's usual
// choice) and either freezes no_session / no_stream at once, or sends the ring through
// the pump to whichever instance holds the stream. The writing instance reports back
// through the recorder: delivered → the ring row is inserted now (the report needs it),
// failed → write_failed (SelfTestOutcomes, which the pump's recorder holds: it is built
// before the pump, the ringer after it). A sweep rings tests whose timer was lost with
// its instance.

import type { Logger } from 'pino';
import type { Queryable } from '../db/pool.js';
import { newId } from '../domain/ids.js';
import { insertRings } from '../store/doorbell-rings.js';
import { getTest, takeTestRing, testsDueRing, type TestRingTarget } from '../store/doorbell-tests.js';
import { neutralise, type ChannelParams } from './content.js';
import type { DeliveredRing, RingRecorder } from './ring-writer.js';
import { toRecord } from './ring-writer.js';
import { RING_DELAY_MS } from './self-test.js';
import { completePass, freezeTest } from './self-test-report.js';
import type { Bus } from '../domain/events.js';

interface Sender {
  send(ring: DeliveredRing, params: ChannelParams, instance: string): Promise<void>;
}

export interface SelfTestRingerDeps {
  db: Queryable;
  log: Logger;
  doorbell: Sender;
  outcomes: SelfTestOutcomes;
  /** Tests only: how long after the start the ring goes out. */
  ringDelayMs?: number;
}

/** The doorbell of a self-test: says it is one, which todo to claim, and that no work is needed. */
export function testRingParams(target: TestRingTarget, ringId: string): ChannelParams {
  const content = [
    `Doorbell self-test for this endpoint: claim ${target.todo_id} (claim with id ${target.todo_id}).`,
    'No work is needed: the claim completes it and proves this session hears doorbells. Then carry on.',
  ].join('\n');
  return {
    content,
    meta: { todo_id: target.todo_id, queue: neutralise(target.queue), ring_id: ringId, kind: 'doorbell_test' },
  };
}

export class SelfTestRinger {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: SelfTestRingerDeps) {}

  listen(bus: Bus): () => void {
    return bus.subscribe('doorbell_test', (e) => {
      this.later(e.endpoint_id, e.test_id);
    });
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.inFlight]);
  }

  /** The sweep's fallback: tests whose ring is overdue. */
  async ringOverdue(): Promise<{ rung: number }> {
    let rung = 0;
    for (const t of await testsDueRing(this.deps.db, this.deps.ringDelayMs ?? RING_DELAY_MS, 100)) {
      if (await this.ring(t.endpoint_id, t.id)) rung += 1;
    }
    return { rung };
  }

  private later(endpointId: string, testId: string): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const run = this.ring(endpointId, testId).then(() => undefined);
      this.inFlight.add(run);
      void run.finally(() => this.inFlight.delete(run));
    }, this.deps.ringDelayMs ?? RING_DELAY_MS);
    this.timers.add(timer);
  }

  /** Takes and rings the test; false when another instance took it. Never throws. */
  async ring(endpointId: string, testId: string): Promise<boolean> {
    try {
      const ringId = newId('rg');
      const target = await takeTestRing(this.deps.db, { endpointId, testId, ringId });
      if (!target) return false;
      if (!target.session_id || !target.instance) return this.deps.outcomes.settle(endpointId, testId, 'no_session');
      // Only a session that declared claude/channel is rung (docs/design/doorbell-acknowledgement.md, "Who is rung").
      if (!target.channel) return this.deps.outcomes.settle(endpointId, testId, 'no_channel');
      if (!target.stream_open) return this.deps.outcomes.settle(endpointId, testId, 'no_stream');
      const ring: DeliveredRing = {
        id: ringId,
        endpointId,
        sessionId: target.session_id,
        todoId: target.todo_id,
        kind: 'test',
        queue: target.queue,
        synthetic: true,
        claimsBefore: 0,
        testId,
      };
      await this.deps.doorbell.send(ring, testRingParams(target, ringId), target.instance);
      return true;
    } catch (err) {
      this.deps.log.error({ err, test: testId }, 'doorbell self-test ring failed');
      return false;
    }
  }
}

/** What becomes of a self-test's ring on the instance that wrote it (or failed to). */
export class SelfTestOutcomes {
  constructor(private readonly deps: { db: Queryable; log: Logger }) {}

  /** The writing instance's report: the ring was written to the stream (delivered). */
  async delivered(ring: DeliveredRing): Promise<void> {
    try {
      await insertRings(this.deps.db, [toRecord(ring, Date.now() - (ring.writtenAt ?? Date.now()))]);
      if (ring.testId) await completePass(this.deps.db, ring.endpointId, ring.testId);
      this.deps.log.info({ test: ring.testId, ring: ring.id }, 'doorbell self-test delivered (written, not yet heard)');
    } catch (err) {
      this.deps.log.error({ err, test: ring.testId }, 'recording a self-test ring failed');
    }
  }

  /** The writing instance's report: the write failed (the stream closed). */
  async failed(ring: DeliveredRing): Promise<void> {
    if (ring.testId) await this.settle(ring.endpointId, ring.testId, 'write_failed');
  }

  /** Freezes the test with a verdict that no ring reached the session. */
  async settle(
    endpointId: string,
    testId: string,
    verdict: 'no_session' | 'no_channel' | 'no_stream' | 'write_failed',
  ): Promise<boolean> {
    try {
      const test = await getTest(this.deps.db, endpointId, testId);
      if (test) await freezeTest(this.deps.db, test, verdict);
      this.deps.log.info({ test: testId, verdict }, 'doorbell self-test could not deliver its ring');
    } catch (err) {
      this.deps.log.error({ err, test: testId }, 'freezing a self-test failed');
    }
    return true;
  }
}

/** What the pump tells after a write: test rings go to the outcomes, the rest to the ring writer. */
export function ringRecorder(writer: { record(ring: DeliveredRing): boolean }, tests: SelfTestOutcomes): RingRecorder {
  return {
    delivered: (ring) => {
      if (ring.testId) void tests.delivered(ring);
      else writer.record(ring);
    },
    failed: (ring) => {
      if (ring.testId) void tests.failed(ring);
    },
  };
}
