// The idle check after a settled claim (docs/design/doorbell-acknowledgement.md, "Who is
// rung"): one timer per session, restarted by each settle, so an agent that drains the
// queue — settle, claim, settle, claim — is never checked while it works, and one that
// stops after a todo is checked once, IDLE_GRACE_MS later. In memory, per instance: a
// check lost with its instance is covered by the heartbeat sweep.

/**
 * How long after a session settles a claim it is rung for waiting work if it has not
 * settled again: an agent that drains the queue claims within milliseconds of a settle, so
 * 2 s rings none of those, while one that stops after a todo hears the rest 2 s later.
 * Shorter rings an agent that works fast between two claims; longer delays the one that stopped.
 */
export const IDLE_GRACE_MS = 2_000;

interface Waiting {
  timer: NodeJS.Timeout;
  /** Resolves `done`: after the check ran, or when it is dropped. */
  finish: () => void;
  done: Promise<void>;
}

export class IdleChecks {
  private readonly waiting = new Map<string, Waiting>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly graceMs: number,
    private readonly check: (endpointId: string, sessionId: string) => Promise<void>,
  ) {}

  /** A session settled a claim: (re)start its timer. */
  settled(endpointId: string, sessionId: string): void {
    const before = this.waiting.get(sessionId);
    if (before) clearTimeout(before.timer);
    let finish = before?.finish ?? (() => {});
    const done = before?.done ?? new Promise<void>((resolve) => (finish = resolve));
    const timer = setTimeout(() => {
      this.waiting.delete(sessionId);
      const run = this.check(endpointId, sessionId).finally(() => {
        this.running.delete(run);
        finish();
      });
      this.running.add(run);
    }, this.graceMs);
    timer.unref();
    this.waiting.set(sessionId, { timer, finish, done });
  }

  /** What settle() waits for: timers still to fire and checks running. */
  pending(): Promise<void>[] {
    return [...[...this.waiting.values()].map((w) => w.done), ...this.running];
  }

  /** Drops the timers not yet fired (shutdown). */
  stop(): void {
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.finish();
    }
    this.waiting.clear();
  }
}
