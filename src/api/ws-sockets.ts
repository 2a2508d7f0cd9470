// The /ws connections this instance holds, by human, each with the board session it was
// opened with (docs/design/people.md, "Board connections"). A connection lives no longer
// than its session: it closes when the human is disabled or deleted (`human_disabled`),
// when one of their sessions ends anywhere (`board_sessions_ended`: sign-out, password
// change, reset link spent; the connections of that human re-check theirs), and at the
// session's own expiry (a timer). After the bus reconnects every connection re-checks,
// because a notification sent meanwhile is lost. It does not authorise frames: each
// action does that in its use case.

import type { Bus } from '../domain/events.js';

/** The slice of a `ws` socket closed here. */
export interface ClosableSocket {
  close(code?: number, reason?: string): void;
}

/** When the board session behind `cookie` ends, or null when it has already ended. */
export type SessionExpiry = (cookie: string) => Promise<Date | null>;

interface Held {
  /** The board session cookie, or null for the synthetic admin (auth off: no session to end). */
  cookie: string | null;
  timer: NodeJS.Timeout | undefined;
  /** Set by `remove`: a check finishing afterwards arms nothing. */
  removed: boolean;
}

/** setTimeout's largest delay (about 24.8 days); a later expiry re-arms when this fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The close code for a connection whose sign-in ended (RFC 6455: policy violation). */
const SIGNED_OUT = 1008;
/** A check that could not reach the database tries again this much later. */
const RETRY_MS = 5_000;

export class BoardSockets {
  private readonly byHuman = new Map<string, Map<ClosableSocket, Held>>();
  private readonly offs: Array<() => void>;

  constructor(
    private readonly expiry: SessionExpiry,
    bus: Bus,
    private readonly onError: (err: unknown) => void,
  ) {
    this.offs = [
      bus.subscribe('human_disabled', (e) => {
        for (const ws of this.byHuman.get(e.human_id)?.keys() ?? []) ws.close(SIGNED_OUT, 'signed out');
      }),
      bus.subscribe('board_sessions_ended', (e) => void this.recheck(e.human_id)),
      bus.onReconnect(() => {
        for (const humanId of [...this.byHuman.keys()]) void this.recheck(humanId);
      }),
    ];
  }

  /** How many connections this instance holds for the human. */
  count(humanId: string): number {
    return this.byHuman.get(humanId)?.size ?? 0;
  }

  /** Holds an open connection until `remove`; it closes at `expiresAt` unless removed before. */
  add(ws: ClosableSocket, humanId: string, cookie: string | null, expiresAt: Date | null): void {
    const mine = this.byHuman.get(humanId) ?? new Map<ClosableSocket, Held>();
    const held: Held = { cookie, timer: undefined, removed: false };
    mine.set(ws, held);
    this.byHuman.set(humanId, mine);
    if (expiresAt) this.arm(ws, held, expiresAt);
  }

  /** Forgets a closed connection. */
  remove(ws: ClosableSocket, humanId: string): void {
    const mine = this.byHuman.get(humanId);
    const held = mine?.get(ws);
    if (!mine || !held) return;
    clearTimeout(held.timer);
    held.removed = true;
    mine.delete(ws);
    if (mine.size === 0) this.byHuman.delete(humanId);
  }

  stop(): void {
    for (const off of this.offs) off();
    for (const mine of this.byHuman.values()) for (const held of mine.values()) clearTimeout(held.timer);
    this.byHuman.clear();
  }

  private arm(ws: ClosableSocket, held: Held, expiresAt: Date): void {
    clearTimeout(held.timer);
    const delay = Math.min(Math.max(0, expiresAt.getTime() - Date.now()), MAX_TIMER_MS);
    held.timer = setTimeout(() => void this.check(ws, held), delay);
    held.timer.unref();
  }

  /** Closes the human's connections whose session has ended; re-arms the others' timers. */
  private async recheck(humanId: string): Promise<void> {
    const mine = this.byHuman.get(humanId);
    if (!mine) return;
    await Promise.all([...mine].map(([ws, held]) => this.check(ws, held)));
  }

  private async check(ws: ClosableSocket, held: Held): Promise<void> {
    if (held.cookie === null) return;
    try {
      const expiresAt = await this.expiry(held.cookie);
      if (held.removed) return;
      if (expiresAt === null) ws.close(SIGNED_OUT, 'signed out');
      else this.arm(ws, held, expiresAt);
    } catch (err) {
      // The database out of reach: the connection stays, and checks again shortly.
      this.onError(err);
      if (!held.removed) this.arm(ws, held, new Date(Date.now() + RETRY_MS));
    }
  }
}
