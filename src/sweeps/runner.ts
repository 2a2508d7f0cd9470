// The one sweep runner. Each sweep runs on its own timer on every instance; before each
// run the instance claims the current tick slot in the database, so exactly one instance
// runs each tick. A sweep never overlaps itself (the next run is scheduled only after
// the last one finished), its errors are logged and counted and never thrown, and stop()
// waits for runs in flight. Each run it makes is timed and reported to its metrics sink
// (docs/metrics.md, "Health"): the duration always, the success only when it succeeded.

import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { SweepSink } from '../metrics/health.js';
import { claimTick } from '../store/sweep-ticks.js';
import { NO_TRACING, type TraceSpan, type Tracing } from '../tracing/index.js';

export interface Sweep {
  name: string;
  intervalMs: number;
  /** Does one tick's work; returns counts worth logging (or nothing). */
  run(): Promise<Record<string, number> | void>;
}

export interface SweepStats {
  runs: number;
  skipped: number;
  errors: number;
}

export interface SweepRunnerOptions {
  db: Pool;
  instanceId: string;
  log: Logger;
  sweeps: Sweep[];
  /** Hears each sweep's interval, then each tick this instance ran: its duration, and when it succeeded. */
  metrics?: SweepSink;
  /** A span per tick, a trace of its own (docs/design/tracing.md, "Sweeps"); absent: off. */
  tracing?: Tracing;
}

export class SweepRunner {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  /** Sweeps whose last run failed because the database was unreachable: logged once per outage. */
  private readonly unreachable = new Set<string>();
  readonly stats = new Map<string, SweepStats>();

  constructor(private readonly options: SweepRunnerOptions) {
    for (const sweep of options.sweeps) {
      this.stats.set(sweep.name, { runs: 0, skipped: 0, errors: 0 });
      options.metrics?.scheduled(sweep.name, sweep.intervalMs / 1000);
    }
  }

  /** Starts every sweep; the first tick comes soon after start (retention at startup too). */
  start(): void {
    if (this.running) return;
    this.running = true;
    for (const sweep of this.options.sweeps) this.schedule(sweep, Math.min(1_000, sweep.intervalMs));
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.inFlight]);
  }

  /** Claims the current slot and runs the sweep if it won; the slot it ran, else null. */
  tick(sweep: Sweep): Promise<number | null> {
    const tracing = this.options.tracing ?? NO_TRACING;
    if (!tracing.enabled) return this.tickOnce(sweep);
    return tracing.run('sweep ' + sweep.name, { root: true, attributes: { 'switchboard.sweep': sweep.name } }, (span) =>
      this.tickOnce(sweep, span).then((slot) => {
        span.setAttribute('switchboard.sweep.ran', slot !== null);
        return slot;
      }),
    );
  }

  private async tickOnce(sweep: Sweep, span?: TraceSpan): Promise<number | null> {
    const stats = this.stats.get(sweep.name) ?? { runs: 0, skipped: 0, errors: 0 };
    this.stats.set(sweep.name, stats);
    try {
      const slot = await claimTick(this.options.db, sweep.name, sweep.intervalMs, this.options.instanceId);
      if (slot === null) {
        stats.skipped += 1;
        return null;
      }
      const started = performance.now();
      const counts = await sweep
        .run()
        .finally(() => this.options.metrics?.ran(sweep.name, (performance.now() - started) / 1000));
      stats.runs += 1;
      this.options.metrics?.succeeded(sweep.name, Date.now());
      if (this.unreachable.delete(sweep.name)) this.options.log.info({ sweep: sweep.name }, 'sweep runs again');
      if (counts && Object.values(counts).some((n) => n > 0))
        this.options.log.info({ sweep: sweep.name, ...counts }, 'sweep');
      return slot;
    } catch (err) {
      stats.errors += 1;
      span?.fail(err instanceof Error ? err.message : String(err));
      if (isDatabaseUnavailable(err)) {
        if (!this.unreachable.has(sweep.name))
          this.options.log.warn(
            { sweep: sweep.name, err: { message: (err as Error).message } },
            'sweep skipped: the database is unavailable; it runs again once it answers',
          );
        this.unreachable.add(sweep.name);
        return null;
      }
      this.options.log.error({ sweep: sweep.name, err }, 'sweep failed; it will run again next tick');
      return null;
    }
  }

  private schedule(sweep: Sweep, delayMs: number): void {
    if (!this.running) return;
    const timer = setTimeout(() => {
      const run = this.tick(sweep).then(() => undefined);
      this.inFlight.add(run);
      void run.finally(() => {
        this.inFlight.delete(run);
        this.schedule(sweep, sweep.intervalMs);
      });
    }, delayMs);
    this.timers.set(sweep.name, timer);
  }
}
