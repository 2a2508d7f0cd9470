// The one sweep runner. Each sweep runs on its own timer on every instance; before each
// run the instance claims the current tick slot in the database, so exactly one instance
// runs each tick. A sweep never overlaps itself (the next run is scheduled only after
// the last one finished), its errors are logged and counted and never thrown, and stop()
// waits for runs in flight.

import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { claimTick } from '../store/sweep-ticks.js';

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
}

export class SweepRunner {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  /** Sweeps whose last run failed because the database was unreachable: logged once per outage. */
  private readonly unreachable = new Set<string>();
  readonly stats = new Map<string, SweepStats>();

  constructor(private readonly options: SweepRunnerOptions) {
    for (const sweep of options.sweeps) this.stats.set(sweep.name, { runs: 0, skipped: 0, errors: 0 });
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
  async tick(sweep: Sweep): Promise<number | null> {
    const stats = this.stats.get(sweep.name) ?? { runs: 0, skipped: 0, errors: 0 };
    this.stats.set(sweep.name, stats);
    try {
      const slot = await claimTick(this.options.db, sweep.name, sweep.intervalMs, this.options.instanceId);
      if (slot === null) {
        stats.skipped += 1;
        return null;
      }
      const counts = await sweep.run();
      stats.runs += 1;
      if (this.unreachable.delete(sweep.name)) this.options.log.info({ sweep: sweep.name }, 'sweep runs again');
      if (counts && Object.values(counts).some((n) => n > 0))
        this.options.log.info({ sweep: sweep.name, ...counts }, 'sweep');
      return slot;
    } catch (err) {
      stats.errors += 1;
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
