// The notification streams (the GET of Streamable HTTP) this instance holds, written
// straight to each Node response: the SSE head the SDK's transport would send, one
// `event: message` frame per server notification, and a keep-alive comment on a stream
// nothing was written to for KEEP_ALIVE_MS. A stream is the only thing this instance
// keeps for a session between requests — no SDK Server or transport — so an idle
// session costs its connection's Node and Fastify objects (~9 KiB of heap in all) and
// about 100 bytes here (bench/README.md, sessions).
// Which session may open a stream, and recording it in mcp_sessions, is LocalStreams'
// (local-streams.ts); this module only writes.
//
// A stream is `reserved` while the registry records it (no bytes sent yet: a second GET
// for the session is refused meanwhile), then `answered` (200 and the SSE head sent) until
// it is ended or its connection closes; an ended or closed stream is removed at once.

import type { ServerResponse } from 'node:http';

/**
 * Quiet time after which a stream gets a keep-alive comment: the SDK transport's default,
 * short enough for proxies and load balancers that drop idle connections after 30–60 s.
 */
export const KEEP_ALIVE_MS = 15_000;
/**
 * How often due keep-alives are looked for. Streams fall due spread over time, so each
 * check writes the few that came due since the last (about 1/75 of the streams at 0.2 s):
 * short bursts, no timer per stream. Longer would batch more writes into one burst.
 */
const KEEP_ALIVE_CHECK_MS = 200;
const KEEP_ALIVE_FRAME = ': keepalive\n\n';

/** A server notification as it is framed on a stream (JSON-RPC 2.0, no id). */
export interface StreamNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface NotificationStream {
  readonly endpointId: string;
  readonly sessionId: string;
  readonly res: ServerResponse;
  answered: boolean;
  /** The clock's reading at the last write (or at the reservation). */
  writtenAt: number;
}

/** The headers the SDK's transport answers a GET with. */
function sseHead(sessionId: string): Record<string, string> {
  return {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    'mcp-session-id': sessionId,
  };
}

export class NotificationStreams {
  /** By session id, least recently written first: the keep-alive check stops at the first stream not due. */
  private readonly streams = new Map<string, NotificationStream>();
  private timer: NodeJS.Timeout | null = null;

  /** `clock`: milliseconds, monotonic; injected by tests. */
  constructor(private readonly clock: () => number = () => performance.now()) {}

  get(sessionId: string): NotificationStream | undefined {
    return this.streams.get(sessionId);
  }

  /** How many streams this instance holds. */
  get size(): number {
    return this.streams.size;
  }

  all(): NotificationStream[] {
    return [...this.streams.values()];
  }

  /** Holds the session's one stream slot for `res`; null when another stream has it. */
  reserve(endpointId: string, sessionId: string, res: ServerResponse): NotificationStream | null {
    if (this.streams.has(sessionId)) return null;
    const stream = { endpointId, sessionId, res, answered: false, writtenAt: this.clock() };
    this.streams.set(sessionId, stream);
    return stream;
  }

  /** Sends 200 and the SSE head; false when the stream was removed or its connection closed meanwhile. */
  answer(stream: NotificationStream): boolean {
    if (!this.holds(stream) || stream.res.destroyed) return false;
    stream.res.writeHead(200, sseHead(stream.sessionId));
    stream.res.flushHeaders();
    stream.answered = true;
    this.touch(stream);
    this.timer ??= setInterval(() => this.keepAlive(), KEEP_ALIVE_CHECK_MS).unref();
    return true;
  }

  /** Writes one message frame to the session's answered stream; false when there is none to write to. */
  write(sessionId: string, message: StreamNotification): boolean {
    const stream = this.streams.get(sessionId);
    if (!stream?.answered || stream.res.writableEnded || stream.res.destroyed) return false;
    stream.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    this.touch(stream);
    return true;
  }

  /** Forgets the stream if it is still the session's; true when it was. Nothing is written. */
  remove(stream: NotificationStream): boolean {
    if (!this.holds(stream)) return false;
    this.streams.delete(stream.sessionId);
    if (this.streams.size === 0) this.stop();
    return true;
  }

  /** Removes the session's stream and ends its response (an unanswered one is left to its request). */
  end(sessionId: string): void {
    const stream = this.streams.get(sessionId);
    if (!stream || !this.remove(stream)) return;
    if (stream.answered) stream.res.end();
  }

  private holds(stream: NotificationStream): boolean {
    return this.streams.get(stream.sessionId) === stream;
  }

  private touch(stream: NotificationStream): void {
    stream.writtenAt = this.clock();
    this.streams.delete(stream.sessionId);
    this.streams.set(stream.sessionId, stream);
  }

  private keepAlive(): void {
    const due = this.clock() - KEEP_ALIVE_MS;
    const quiet: NotificationStream[] = [];
    for (const stream of this.streams.values()) {
      if (stream.writtenAt > due) break;
      quiet.push(stream);
    }
    for (const stream of quiet) {
      if (stream.answered && !stream.res.writableEnded && !stream.res.destroyed) stream.res.write(KEEP_ALIVE_FRAME);
      this.touch(stream);
    }
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
