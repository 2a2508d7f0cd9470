// The health series of one process (docs/metrics.md, "Health"): its connection pool, its
// event loop, the notification streams and long-poll waits it holds, its sweep ticks, and
// what build it runs. Unlike the scrape-time gauges of metrics-reads.ts these describe THIS
// instance, not the database: compare or sum them across instances, per instance.
// `metrics.health`, built once by the Metrics constructor. Nothing here imports pg or
// reaches into a service: the composition root hands in read functions (`read`), and the
// sweep runner reports its ticks through the `SweepSink` it is given. Until `read` is
// called, and whenever a read throws or answers no number, the pool, stream and long-poll
// gauges are left out of that scrape (which still succeeds).

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { versionInfo } from '../version.js';

/** The pool's connection counts at one instant (pg's Pool totalCount, idleCount, waitingCount). */
export interface PoolCounts {
  total: number;
  idle: number;
  /** Checkouts queued for a connection. */
  waiting: number;
}

/** What the composition root reads for the health gauges, each at scrape time. */
export interface HealthReads {
  pool(): PoolCounts;
  /** MCP notification streams open on this instance. */
  openStreams(): number;
  /** claim_next / next_message waits in progress on this instance. */
  waitingLongPolls(): number;
}

/** What the sweep runner reports after a tick it ran (won the slot of). */
export interface SweepSink {
  /** The runner runs the sweep every `seconds` (its interval, told once at construction). */
  scheduled(sweep: string, seconds: number): void;
  /** The run's duration, succeeded or failed. */
  ran(sweep: string, seconds: number): void;
  /** The run finished without an error, at `at` (ms since the epoch). */
  succeeded(sweep: string, at: number): void;
}

/**
 * Buckets of switchboard_sweep_tick_seconds: most sweeps finish in milliseconds (an index
 * probe finding nothing); a retention or fold pass over a large batch takes seconds; past
 * 30 s a tick is stuck on a lock or a slow statement, and the statement timeout should end it.
 */
export const SWEEP_TICK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The event loop delay monitor's sampling period, in ms: 10 ms is fine enough to see a
 * stall worth alerting on (tens of ms) and costs one timer tick per period; it is unref'd,
 * so it never holds the process open.
 */
const LAG_RESOLUTION_MS = 10;

export class HealthSeries {
  #reads: HealthReads | null = null;
  readonly #lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  readonly sweeps: SweepSink;

  constructor(registry: Registry) {
    const reads = () => this.#reads;
    const lag = this.#lag;
    lag.enable();
    new Gauge<'state'>({
      name: 'switchboard_db_pool_connections',
      help: "This instance's database pool: connections open (total), idle, and checkouts waiting for one.",
      labelNames: ['state'],
      registers: [registry],
      collect() {
        this.reset();
        const counts = attempt(() => reads()?.pool());
        for (const state of ['total', 'idle', 'waiting'] as const) {
          const n = counts?.[state];
          if (Number.isFinite(n)) this.set({ state }, n as number);
        }
      },
    });
    new Gauge({
      name: 'switchboard_event_loop_lag_seconds',
      help: "The 99th percentile of this process's event loop delay since the previous scrape.",
      registers: [registry],
      collect() {
        // percentile() is 0 when nothing was sampled since the last reset.
        this.set(lag.percentile(99) / 1e9);
        lag.reset();
      },
    });
    readCount(registry, 'switchboard_open_streams', 'MCP notification streams open on this instance.', () =>
      reads()?.openStreams(),
    );
    readCount(
      registry,
      'switchboard_waiting_long_polls',
      'claim_next and next_message calls waiting (wait_seconds) on this instance.',
      () => reads()?.waitingLongPolls(),
    );
    const tick = new Histogram<'sweep'>({
      name: 'switchboard_sweep_tick_seconds',
      help: 'Duration of the sweep ticks this instance ran (won the slot of), succeeded or failed.',
      labelNames: ['sweep'],
      buckets: SWEEP_TICK_BUCKETS,
      registers: [registry],
    });
    const lastSuccess = new Gauge<'sweep'>({
      name: 'switchboard_sweep_last_success_timestamp_seconds',
      help: 'When a tick of the sweep last succeeded on this instance (Unix seconds).',
      labelNames: ['sweep'],
      registers: [registry],
    });
    // The interval next to the last success lets one alert rule bound every sweep's
    // staleness by its own configured interval (docs/metrics.md, "Alerts").
    const interval = new Gauge<'sweep'>({
      name: 'switchboard_sweep_interval_seconds',
      help: 'How often the sweep is due to tick (its configured interval), on every instance that runs it.',
      labelNames: ['sweep'],
      registers: [registry],
    });
    this.sweeps = {
      scheduled: (sweep, seconds) => interval.set({ sweep }, seconds),
      ran: (sweep, seconds) => tick.observe({ sweep }, seconds),
      succeeded: (sweep, at) => lastSuccess.set({ sweep }, at / 1000),
    };
    const build = new Gauge<'version' | 'node'>({
      name: 'switchboard_build_info',
      help: 'Always 1; its labels say which Switchboard version and Node.js runtime this process runs.',
      labelNames: ['version', 'node'],
      registers: [registry],
    });
    build.set({ version: versionInfo().version, node: process.version }, 1);
  }

  /** Gives the pool, stream and long-poll gauges their reads (the composition root, once). */
  read(reads: HealthReads): void {
    this.#reads = reads;
  }
}

/** An unlabelled gauge set from `read` at each scrape; left out while `read` answers no number. */
function readCount(registry: Registry, name: string, help: string, read: () => number | undefined): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      const n = attempt(read);
      if (n !== undefined && Number.isFinite(n)) this.set(n);
      else this.remove({});
    },
  });
}

/** A read's answer, or undefined when it threw: a health read never fails the scrape. */
function attempt<T>(read: () => T | undefined): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
