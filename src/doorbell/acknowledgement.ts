// Wires the doorbell's acknowledgement side for one instance
// (docs/design/doorbell-acknowledgement.md): the ring writer that records delivered
// rings, the self-test ringer and their sweeps (the unheard-session gauge is one of the
// registry's scrape-time collectors, metrics-reads.ts). The composition root builds it
// before the pump and passes `recorder` to it.

import type { Logger } from 'pino';
import type { Queryable } from '../db/pool.js';
import type { DoorbellCounters } from '../metrics/doorbell.js';
import { doorbellTestsSweep, unheardSweep } from '../sweeps/unheard.js';
import type { Sweep } from '../sweeps/runner.js';
import type { ChannelParams } from './content.js';
import { RingRowWriter, type DeliveredRing, type RingRecorder } from './ring-writer.js';
import { ringRecorder, SelfTestRinger } from './self-test-ring.js';
import type { Bus } from '../domain/events.js';

export interface AcknowledgementDeps {
  db: Queryable;
  log: Logger;
  /** The registry's doorbell counters (`metrics.doorbell`). */
  metrics: DoorbellCounters;
  bus: Bus;
  ackWindowMs: number;
  /** The pump's send: writes here or forwards to the instance holding the stream. */
  send: (ring: DeliveredRing, params: ChannelParams, instance: string) => Promise<void>;
}

export interface Acknowledgement {
  recorder: RingRecorder;
  writer: RingRowWriter;
  ringer: SelfTestRinger;
  sweeps: Sweep[];
  stop(): Promise<void>;
}

export function doorbellAcknowledgement(deps: AcknowledgementDeps): Acknowledgement {
  const { metrics } = deps;
  const writer = new RingRowWriter({ db: deps.db, log: deps.log, metrics });
  const ringer = new SelfTestRinger({ db: deps.db, log: deps.log, doorbell: { send: deps.send } });
  const unlisten = ringer.listen(deps.bus);
  return {
    recorder: ringRecorder(writer, ringer),
    writer,
    ringer,
    sweeps: [
      unheardSweep({ db: deps.db, log: deps.log, ackWindowMs: deps.ackWindowMs, metrics }),
      doorbellTestsSweep({ db: deps.db, ringer }),
    ],
    async stop() {
      unlisten();
      await ringer.stop();
      await writer.flush();
    },
  };
}
