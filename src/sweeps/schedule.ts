// Promoting scheduled todos (docs/design/todos.md, "Not before"). Every instance keeps one
// timer armed for the next due not_before: read from the database at start and after each
// run, and moved earlier when any instance creates a todo due sooner (the todo_scheduled
// event carries the instant). When it fires the instance runs the promotion statement
// (store/todo-schedule.ts), which promotes each due todo exactly once whichever instances
// run it, and announces todo_ready, so the promoted todo rings and is admitted like a new
// one. The `schedule_promotion` sweep runs the same pass on the sweep runner's ticks: the
// safety net for a lost notification or a timer that died with an error.
//
// Not a claimed sweep on its own: a due todo is promoted at its instant by every
// instance's timer, not at the next tick of one.

import type { Logger } from 'pino';
import type { Queryable } from '../db/pool.js';
import type { Bus } from '../domain/events.js';
import { msUntilNextDue, promoteDue } from '../store/todo-schedule.js';
import type { Sweep } from './runner.js';

// 500 rows keep the statement's locks small; 20 batches (10,000 todos due at one instant)
// a run, then the timer comes back at once for the rest.
const BATCH = 500;
const MAX_BATCHES = 20;
// The shortest wait between runs: the instance's clock and the database's differ by a few
// milliseconds, and a due row another instance is promoting right now still reads as due,
// so a run that promoted nothing must not spin.
const MIN_DELAY_MS = 25;
// The longest a timer is armed for (far below setTimeout's 24.8-day limit): then the next
// due instant is read again, which also heals a missed todo_scheduled event.
const MAX_DELAY_MS = 3_600_000;

export class SchedulePromoter {
  private timer: NodeJS.Timeout | null = null;
  /** The local instant (ms) the timer is armed for. */
  private armedFor: number | null = null;
  private inFlight: Promise<number> | null = null;
  private listening = false;

  constructor(private readonly options: { db: Queryable; log: Logger }) {}

  /** Arms the timer from the database and follows todo_scheduled; the returned function undoes it. */
  listen(bus: Bus): () => void {
    this.listening = true;
    const offs = [
      bus.subscribe('todo_scheduled', (e) => this.armAt(Date.parse(e.not_before))),
      bus.onReconnect(() => this.wake()),
    ];
    this.wake();
    return () => {
      this.listening = false;
      for (const off of offs) off();
      this.disarm();
    };
  }

  /** Waits for a run in flight (after the returned function of listen()). */
  async settle(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
  }

  /**
   * Promotes every due todo (in batches), then re-arms the timer for the next one. One run
   * at a time on this instance: a run asked for meanwhile joins the one in flight.
   */
  promote(): Promise<number> {
    this.inFlight ??= this.run().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async run(): Promise<number> {
    let total = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const n = await promoteDue(this.options.db, BATCH);
      total += n;
      if (n < BATCH) break;
    }
    const ms = await msUntilNextDue(this.options.db);
    if (ms !== null) this.armAt(Date.now() + ms, true);
    return total;
  }

  private wake(): void {
    this.promote().catch((err: unknown) => this.options.log.error({ err }, 'promoting scheduled todos failed'));
  }

  /** Arms for `at` unless armed earlier already (`replace`: the database's answer wins). */
  private armAt(at: number, replace = false): void {
    if (!this.listening || Number.isNaN(at)) return;
    if (!replace && this.armedFor !== null && this.armedFor <= at) return;
    this.disarm();
    const delay = Math.min(MAX_DELAY_MS, Math.max(MIN_DELAY_MS, at - Date.now()));
    this.armedFor = Date.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedFor = null;
      this.wake();
    }, delay);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = null;
  }
}

/** The safety net: the same promotion on the sweep runner's ticks. */
export function schedulePromotionSweep(promoter: SchedulePromoter, intervalMs: number): Sweep {
  return { name: 'schedule_promotion', intervalMs, run: async () => ({ promoted: await promoter.promote() }) };
}
