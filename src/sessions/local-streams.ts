// The notification streams this instance holds, as a service: the MCP surface opens and
// closes them (GET /mcp), the doorbell and the message pump write to them, the heartbeat
// re-marks them after a stall, shutdown closes them. mcp_sessions records which instance
// holds each session's stream (stream_open, stream_instance); the marks of one session
// are written in order so a quick reconnect never ends up recorded as closed.
// Listeners hear a stream open (answered) and close: the composition root (src/services.ts)
// connects them to the doorbell (ring-on-attach) and the message pump.

import type { ServerResponse } from 'node:http';
import { markStream, type SessionDeps } from './index.js';
import { NotificationStreams, type NotificationStream } from './streams.js';

export type { NotificationStream } from './streams.js';

export interface StreamLog {
  error(obj: object, msg: string): void;
}

/** A session's stream opened (answered) or closed on this instance. */
export interface StreamEvent {
  endpointId: string;
  sessionId: string;
}

export interface StreamListener {
  opened(event: StreamEvent): void;
  closed(event: StreamEvent): void;
}

export class LocalStreams {
  private readonly streams: NotificationStreams;
  /** The last stream mark written per session, so marks apply in order and shutdown can wait for them. */
  private readonly marks = new Map<string, Promise<void>>();
  /** Streams whose opening was announced to the listeners (their close is announced too). */
  private readonly announced = new WeakSet<NotificationStream>();
  private readonly listeners: StreamListener[] = [];
  private closing = false;

  /** `clock`: milliseconds, monotonic, for keep-alives; injected by tests. */
  constructor(private readonly deps: { sessions: SessionDeps; log: StreamLog; clock?: () => number }) {
    this.streams = new NotificationStreams(deps.clock);
  }

  /** Hears every stream that opens or closes from now on; returns the unsubscribe. */
  listen(listener: StreamListener): () => void {
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }

  /** The endpoint holding this session's stream here, if any. */
  holder(sessionId: string): string | undefined {
    return this.streams.get(sessionId)?.endpointId;
  }

  /** Notification streams this instance holds (reserved or open), for the health gauges. */
  count(): number {
    return this.streams.size;
  }

  /** Ends this instance's stream of the session (a close, a revoke, a dead row). */
  end(sessionId: string): void {
    this.streams.end(sessionId);
  }

  /**
   * Another instance (or this one) closed a session, or revoked its endpoint: end the
   * streams this instance holds for it. The rows are already closed.
   */
  forget(event: { endpointId: string; sessionId?: string | undefined }): void {
    const streams =
      event.sessionId === undefined ? this.streams.all() : [this.streams.get(event.sessionId)].filter((s) => !!s);
    for (const stream of streams) if (stream.endpointId === event.endpointId) this.streams.end(stream.sessionId);
  }

  /**
   * Writes a channel notification to the session's stream held by this instance. False
   * when this instance holds no open stream for it: the caller counts that as a failed write.
   */
  async ring(sessionId: string, params: { content: string; meta: Record<string, string> }): Promise<boolean> {
    return this.streams.write(sessionId, { jsonrpc: '2.0', method: 'notifications/claude/channel', params });
  }

  /** Takes the session's one stream slot for `res` (null: another stream holds it); `opened` records it. */
  reserve(endpointId: string, sessionId: string, res: ServerResponse): NotificationStream | null {
    return this.streams.reserve(endpointId, sessionId, res);
  }

  /**
   * Records a reserved stream as open (ordered after any earlier mark of the session),
   * then answers it and tells the listeners; false when it was ended or its connection
   * closed meanwhile. When the mark fails the slot is given up and the error thrown.
   */
  async opened(stream: NotificationStream): Promise<boolean> {
    try {
      await this.mark(stream.endpointId, stream.sessionId, true);
    } catch (err) {
      this.streams.remove(stream);
      throw err;
    }
    if (!this.streams.answer(stream)) return false;
    this.announced.add(stream);
    const event = { endpointId: stream.endpointId, sessionId: stream.sessionId };
    for (const l of this.listeners) l.opened(event);
    return true;
  }

  /** The stream's connection closed: forget it and record it closed, unless a newer stream holds the session. */
  closed(stream: NotificationStream): void {
    this.release(stream);
    if (!this.announced.has(stream)) return;
    const event = { endpointId: stream.endpointId, sessionId: stream.sessionId };
    for (const l of this.listeners) l.closed(event);
  }

  private release(stream: NotificationStream): void {
    if (!this.streams.remove(stream)) return;
    // On shutdown closeAll has recorded it already, before the pool goes away.
    if (this.closing) return;
    this.mark(stream.endpointId, stream.sessionId, false).catch((err: unknown) =>
      this.deps.log.error({ err, session: stream.sessionId }, 'could not mark a stream closed'),
    );
  }

  /**
   * Marks every stream this instance holds as open again: another instance took this one
   * for dead (a stall longer than the dead-after threshold) and marked them closed. A
   * session whose client has meanwhile opened a stream on another instance stays there.
   */
  async reopen(): Promise<void> {
    if (this.closing) return;
    await Promise.all(
      this.streams
        .all()
        .map((s) =>
          this.mark(s.endpointId, s.sessionId, true, true).catch((err: unknown) =>
            this.deps.log.error({ err, session: s.sessionId }, 'could not mark a stream open again'),
          ),
        ),
    );
  }

  /** Shutdown: record this instance's streams as closed, then end every one. */
  async closeAll(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.marks.values()].map((m) => m.catch(() => undefined)));
    const streams = this.streams.all();
    await Promise.all(
      streams.map((s) =>
        markStream(this.deps.sessions, s.endpointId, s.sessionId, false).catch((err: unknown) =>
          this.deps.log.error({ err, session: s.sessionId }, 'could not mark a stream closed'),
        ),
      ),
    );
    for (const s of streams) this.streams.end(s.sessionId);
  }

  /** Stream marks of one session run in order, so a quick reconnect never ends up recorded as closed. */
  private mark(endpointId: string, sessionId: string, open: boolean, ifFree = false): Promise<void> {
    const previous = this.marks.get(sessionId) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(() => markStream(this.deps.sessions, endpointId, sessionId, open, ifFree));
    this.marks.set(sessionId, next);
    void next
      .catch(() => undefined)
      .finally(() => {
        if (this.marks.get(sessionId) === next) this.marks.delete(sessionId);
      });
    return next;
  }
}
