// Long-poll waits (docs/design/mcp-surface.md, "Waiting"): a claim_next or next_message
// called with wait_seconds > 0 that finds nothing at once waits here, on this instance,
// for a bus event that may mean work for it — `todo_ready` on one of its queues,
// `message_ready` for its session — and then makes a real attempt (a claim, a
// reservation). Nothing here touches the database: the attempt is the caller's, and a
// waiter holds no pool connection while it waits, only a timer and a few closures (the
// session's waiting mark, `onWait`, is the composition root's write).
//
// Fairness and wake-one: the waiters of one endpoint are a list in arrival order; an
// event wakes the first idle waiter it concerns, and only that one, so one todo wakes one
// waiter. A woken waiter that finds nothing goes back to waiting in its place. An event
// that arrives while every waiter it concerns is mid-attempt marks the first of them to
// try again at once (its attempt may have read before the work was committed). A waiter
// that claimed wakes the next one on that queue: one `todo_ready` can stand for several
// todos (a requeue, a reopen), and the chain stops at the first waiter that finds nothing.
// A queue a waiter's last attempt found deferred (over budget) wakes it only with
// `reopen`. A lost notification is covered by a slow re-check (FALLBACK_MS) and by a
// re-check of every waiter when the bus reconnects.

import { performance } from 'node:perf_hooks';
import { AppError } from '../domain/errors.js';
import type { Bus } from '../domain/events.js';
import type { LatencyHistograms, LongPollOutcome, LongPollVerb } from '../metrics/latency.js';

/** Each waiter re-tries this often without an event: the cover for a lost notification. */
export const FALLBACK_MS = 5_000;

/** One attempt's outcome: `done` ends the wait with `value`; otherwise `value` is the empty answer so far. */
export type Attempt<T> =
  | { done: true; value: T; /** The queue it claimed on: the next waiter there is woken. */ queue?: string }
  | {
      done: false;
      value: T;
      /** Queues a budget held back: their pushes wake this waiter only on reopen. */ deferred?: string[];
    };

/** What a use case that may wait needs: this instance's waiters, and the caller's going away. */
export interface Waiting {
  waiters: Waiters;
  /** The request's abort signal, made on first use (a call that never waits makes none). */
  signal?: (() => AbortSignal) | undefined;
}

export interface WaitRequest<T> {
  /** The waiting verb: the `verb` label of switchboard_long_poll_wait_seconds. */
  verb: LongPollVerb;
  endpointId: string;
  sessionId: string;
  /** The queues a claim waits on; null for a session message. */
  queues: string[] | null;
  seconds: number;
  /** Aborted when the caller went away (client disconnect): the wait ends at once. */
  signal?: AbortSignal | undefined;
  /** What to answer when the wait ends before any attempt. */
  empty: T;
  attempt: () => Promise<Attempt<T>>;
}

interface Waiter {
  endpointId: string;
  sessionId: string;
  queues: string[] | null;
  deferred: Set<string>;
  attempting: boolean;
  /** An event came while attempting: try once more before waiting. */
  again: boolean;
  /** Set while waiting idle: resolves the idle promise. */
  wake: ((why: 'woken' | 'ended') => void) | null;
  ended: boolean;
  /** onWait was told of this call (once, as it first goes idle). */
  told: boolean;
}

export interface WaitersOptions {
  /** SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT: waiting calls of one endpoint on this instance. */
  maxPerEndpoint: number;
  fallbackMs?: number;
  /** switchboard_long_poll_wait_seconds: each waiting call, timed here, where its end is known. */
  metrics?: Pick<LatencyHistograms, 'waited'>;
  /**
   * Told once per call, as it first goes idle, how many seconds it may still wait: the
   * session is marked busy for an initialize at the cap (docs/design/mcp-surface.md,
   * "Limits"). Not awaited; a call that finds work at once is never told.
   */
  onWait?: (endpointId: string, sessionId: string, seconds: number) => void;
}

export class Waiters {
  private readonly byEndpoint = new Map<string, Waiter[]>();
  private readonly fallbackMs: number;
  private closing = false;
  /** Attempts finished by waiting calls (the first included), for tests and metrics. */
  attempts = 0;

  constructor(private readonly options: WaitersOptions) {
    this.fallbackMs = options.fallbackMs ?? FALLBACK_MS;
  }

  /** Hears work and endings from every instance; the composition root calls it in start(). */
  listen(bus: Bus): () => void {
    const offs = [
      bus.subscribe('todo_ready', (e) => this.todoReady(e.endpoint_id, e.queue, e.reopen === true)),
      bus.subscribe('message_ready', (e) => {
        if (e.deliver !== false) this.messageReady(e.endpoint_id, e.session_id);
      }),
      bus.subscribe('session_closed', (e) => this.end(e.endpoint_id, e.session_id)),
      bus.subscribe('endpoint_revoked', (e) => this.end(e.endpoint_id)),
      // Anything sent while the bus was down is lost: every waiter looks again.
      bus.onReconnect(() => this.wakeAll()),
    ];
    return () => offs.forEach((off) => off());
  }

  /** Calls waiting now, of one endpoint or of all (tests, metrics). */
  waiting(endpointId?: string): number {
    if (endpointId !== undefined) return this.byEndpoint.get(endpointId)?.length ?? 0;
    let n = 0;
    for (const list of this.byEndpoint.values()) n += list.length;
    return n;
  }

  /** Work became ready (or admissible again) on a queue: the first idle waiter for it tries. */
  todoReady(endpointId: string, queue: string, reopen: boolean): void {
    const list = this.byEndpoint.get(endpointId);
    if (!list) return;
    const concerned = list.filter((w) => !w.ended && w.queues !== null && w.queues.includes(queue));
    if (reopen) for (const w of concerned) w.deferred.delete(queue);
    this.wakeOne(concerned.filter((w) => !w.deferred.has(queue)));
  }

  /** A session's message queue may have a message to hand out. */
  messageReady(endpointId: string, sessionId: string): void {
    const list = this.byEndpoint.get(endpointId);
    if (!list) return;
    this.wakeOne(list.filter((w) => !w.ended && w.queues === null && w.sessionId === sessionId));
  }

  /** A session closed (or, without one, the endpoint was revoked): its waits end now. */
  end(endpointId: string, sessionId?: string): void {
    for (const w of this.byEndpoint.get(endpointId) ?? []) {
      if (sessionId !== undefined && w.sessionId !== sessionId) continue;
      w.ended = true;
      this.fire(w, 'ended');
    }
  }

  /**
   * Shutdown: every wait ends now with its last answer, and a call from here on attempts
   * once without waiting, so closing the HTTP server never waits out a deadline.
   */
  close(): void {
    this.closing = true;
    for (const list of this.byEndpoint.values()) {
      for (const w of list) {
        w.ended = true;
        this.fire(w, 'ended');
      }
    }
  }

  private wakeAll(): void {
    for (const list of this.byEndpoint.values()) {
      for (const w of list) {
        w.deferred.clear();
        if (!this.fire(w, 'woken')) w.again = true;
      }
    }
  }

  /** The first idle waiter, in arrival order; when all are mid-attempt, the first of them tries again. */
  private wakeOne(concerned: Waiter[]): void {
    for (const w of concerned) if (this.fire(w, 'woken')) return;
    const busy = concerned.find((w) => w.attempting && !w.again);
    if (busy) busy.again = true;
  }

  private fire(w: Waiter, why: 'woken' | 'ended'): boolean {
    const wake = w.wake;
    if (!wake) return false;
    w.wake = null;
    wake(why);
    return true;
  }

  /**
   * Attempts at once, then after each wake-up, until an attempt is done, the deadline
   * passes, the caller goes away or its session closes. resource_exhausted, before any
   * attempt, when the endpoint already has its bound of waiting calls here.
   */
  async wait<T>(r: WaitRequest<T>): Promise<T> {
    if (this.closing) {
      return this.timed(r, async () => {
        const out = await r.attempt();
        return { value: out.value, outcome: out.done ? 'work' : 'closed' };
      });
    }
    const list = this.byEndpoint.get(r.endpointId) ?? [];
    if (list.length >= this.options.maxPerEndpoint) {
      throw new AppError(
        'resource_exhausted',
        `wait_seconds: this endpoint already has ${this.options.maxPerEndpoint} calls waiting on this server ` +
          '(SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT); call again without wait_seconds, or when one has answered',
        { field: 'wait_seconds', limit: this.options.maxPerEndpoint },
      );
    }
    this.byEndpoint.set(r.endpointId, list);
    return this.timed(r, () => this.waitListed(r, list));
  }

  /**
   * switchboard_long_poll_wait_seconds (docs/metrics.md, "Latency"): from the call's first
   * attempt to its answer, on a monotonic clock, by how it ended. A caller that went away
   * is `gone` whatever its last attempt got (the verb gives that back); a call refused
   * before any attempt (resource_exhausted) never waited and is not observed.
   */
  private async timed<T>(r: WaitRequest<T>, run: () => Promise<{ value: T; outcome: LongPollOutcome }>): Promise<T> {
    const started = performance.now();
    let outcome: LongPollOutcome = 'error';
    try {
      const ended = await run();
      outcome = r.signal?.aborted === true ? 'gone' : ended.outcome;
      return ended.value;
    } finally {
      this.options.metrics?.waited(r.verb, outcome, (performance.now() - started) / 1000);
    }
  }

  private async waitListed<T>(r: WaitRequest<T>, list: Waiter[]): Promise<{ value: T; outcome: LongPollOutcome }> {
    const w: Waiter = {
      endpointId: r.endpointId,
      sessionId: r.sessionId,
      queues: r.queues,
      deferred: new Set(),
      attempting: false,
      again: false,
      wake: null,
      ended: false,
      told: false,
    };
    // Listed before the first attempt, so an event that lands during it is not lost.
    list.push(w);
    // On the monotonic clock the histogram uses (timed): a wait of n seconds answers its
    // timeout no sooner than n seconds after it began, whatever the wall clock does.
    const deadline = performance.now() + r.seconds * 1000;
    const gone = () => w.ended || r.signal?.aborted === true;
    let answer = r.empty;
    let claimedOn: string | undefined;
    try {
      while (!gone()) {
        w.attempting = true;
        w.again = false;
        let out: Attempt<T>;
        try {
          out = await r.attempt();
        } finally {
          w.attempting = false;
          this.attempts += 1;
        }
        answer = out.value;
        if (out.done) {
          claimedOn = out.queue;
          return { value: answer, outcome: 'work' };
        }
        w.deferred = new Set(out.deferred ?? []);
        if (w.again) continue;
        const remaining = deadline - performance.now();
        if (remaining <= 0 || gone()) break;
        // The last sleep is the deadline, with no attempt after it. A timer runs in whole
        // milliseconds and may fire up to one early, so it sleeps one more: never short.
        const last = remaining <= this.fallbackMs;
        if (!w.told) this.tell(w, Math.ceil(remaining / 1000) + 1);
        const why = await this.idle(w, last ? Math.ceil(remaining) + 1 : this.fallbackMs, r.signal);
        if (why === 'ended' || (why === 'timeout' && last)) break;
      }
      // Ended by its session, its endpoint or shutdown; else the deadline (or the caller's abort, made `gone` above).
      return { value: answer, outcome: w.ended ? 'closed' : 'timeout' };
    } finally {
      const at = list.indexOf(w);
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0 && this.byEndpoint.get(r.endpointId) === list) this.byEndpoint.delete(r.endpointId);
      if (claimedOn !== undefined) this.todoReady(r.endpointId, claimedOn, false);
    }
  }

  private tell(w: Waiter, seconds: number): void {
    w.told = true;
    this.options.onWait?.(w.endpointId, w.sessionId, seconds);
  }

  /** Waits for a wake-up, an end, the caller's abort or `ms`. */
  private idle(w: Waiter, ms: number, signal: AbortSignal | undefined): Promise<'woken' | 'ended' | 'timeout'> {
    return new Promise((resolve) => {
      const done = (why: 'woken' | 'ended' | 'timeout') => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        w.wake = null;
        resolve(why);
      };
      const aborted = () => done('ended');
      const timer = setTimeout(() => done('timeout'), ms);
      signal?.addEventListener('abort', aborted, { once: true });
      w.wake = done;
      if (signal?.aborted) done('ended');
    });
  }
}
