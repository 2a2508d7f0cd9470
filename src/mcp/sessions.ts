// The MCP session registry of this instance. mcp_sessions (via src/sessions) is the
// truth; between requests this instance keeps only the notification streams it holds
// (streams.ts). The SDK Server and transport that answer a POST are built for that one
// request — any instance serves any live session of the caller's endpoint, already
// initialised, the same way — and closed when its answer is done, so a session that is
// only listening holds no SDK objects at all.
// A session id of another endpoint, unknown or closed, is "not found" (404).

import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { newId } from '../domain/ids.js';
import type { Endpoint } from '../endpoints/credentials.js';
import { closeSession, markStream, openSession, type SessionDeps } from '../sessions/index.js';
import type { ErrorLog } from './errors.js';
import { NotificationStreams, type NotificationStream } from './streams.js';

/** The SDK objects that answer one POST; `close` them once its answer is done. */
export interface RequestProtocol {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

export interface RegistryDeps {
  sessions: SessionDeps;
  log: ErrorLog;
  /** A fresh MCP Server for one request of a session of an endpoint. */
  protocol: (endpoint: Endpoint, sessionId: string) => Server;
}

/**
 * Marks a new transport as initialised for a known session id. The SDK has no public
 * way to resume a session in another transport, so this sets the two fields its session
 * check reads; the session tests fail loudly if a new SDK version moves them.
 */
function adoptSession(transport: StreamableHTTPServerTransport, sessionId: string): void {
  const inner = (transport as unknown as { _webStandardTransport?: { sessionId?: string; _initialized?: boolean } })
    ._webStandardTransport;
  if (!inner || inner._initialized !== false) {
    throw new Error('the MCP SDK transport changed shape: cannot resume a session on this instance');
  }
  inner.sessionId = sessionId;
  inner._initialized = true;
}

export class SessionRegistry {
  private readonly streams = new NotificationStreams();
  /** The last stream mark written per session, so marks apply in order and shutdown can wait for them. */
  private readonly marks = new Map<string, Promise<void>>();
  private closing = false;

  constructor(private readonly deps: RegistryDeps) {}

  /** The SDK objects for an initialize request; the session row is written when the SDK mints the id. */
  async initialize(endpoint: Endpoint, clientInfo: { name?: unknown; version?: unknown } | null) {
    const sessionId = newId('ms');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      // The row is written before the SDK answers: a refused initialize leaves nothing behind.
      onsessioninitialized: async (id) => {
        await openSession(this.deps.sessions, { endpointId: endpoint.id, id, clientInfo });
      },
    });
    return this.connect(endpoint, sessionId, transport);
  }

  /** The SDK objects for one POST of a live session (check `isLive` first), as if initialised here. */
  async adopt(endpoint: Endpoint, sessionId: string): Promise<RequestProtocol> {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => sessionId });
    adoptSession(transport, sessionId);
    return this.connect(endpoint, sessionId, transport);
  }

  /** Ends one request's SDK objects; a failure is logged, never thrown. */
  async release(protocol: RequestProtocol): Promise<void> {
    await protocol.server
      .close()
      .catch((err: unknown) => this.deps.log.error({ err }, 'closing an MCP request failed'));
  }

  /**
   * Whether this endpoint may use this session, given what mcp_sessions says of it
   * (`rowLive`); a closed session's stream here is ended.
   */
  async isLive(endpoint: Endpoint, sessionId: string, rowLive: boolean): Promise<boolean> {
    const known = this.streams.get(sessionId);
    if (!rowLive && known?.endpointId === endpoint.id) this.streams.end(sessionId);
    return rowLive && (!known || known.endpointId === endpoint.id);
  }

  /** DELETE: closes the row and ends this instance's stream of it. */
  async close(endpoint: Endpoint, sessionId: string): Promise<boolean> {
    const known = this.streams.get(sessionId);
    if (known && known.endpointId !== endpoint.id) return false;
    const closed = await closeSession(this.deps.sessions, endpoint.id, sessionId);
    this.streams.end(sessionId);
    return closed !== null;
  }

  /**
   * Another instance (or this one) closed a session, or revoked its endpoint: end the
   * streams this instance holds for it. The rows are already closed.
   */
  async forget(event: { endpointId: string; sessionId?: string }): Promise<void> {
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

  /** Takes the session's one stream slot for `res` (null: another stream holds it); `streamOpened` records it. */
  reserveStream(endpointId: string, sessionId: string, res: ServerResponse): NotificationStream | null {
    return this.streams.reserve(endpointId, sessionId, res);
  }

  /**
   * Records a reserved stream as open (ordered after any earlier mark of the session),
   * then answers it; false when it was ended or its connection closed meanwhile. When the
   * mark fails the slot is given up and the error thrown.
   */
  async streamOpened(stream: NotificationStream): Promise<boolean> {
    try {
      await this.mark(stream.endpointId, stream.sessionId, true);
    } catch (err) {
      this.streams.remove(stream);
      throw err;
    }
    return this.streams.answer(stream);
  }

  /** The stream's connection closed: forget it and record it closed, unless a newer stream holds the session. */
  streamClosed(stream: NotificationStream): void {
    if (!this.streams.remove(stream)) return;
    // On shutdown closeAll has recorded it already, before the pool goes away.
    if (this.closing) return;
    this.mark(stream.endpointId, stream.sessionId, false).catch((err: unknown) =>
      this.deps.log.error({ err, session: stream.sessionId }, 'could not mark a stream closed'),
    );
  }

  /**
   * Marks every stream this instance holds as open again: another instance took this one
   * for dead (a stall longer than the dead-after threshold) and marked them closed.
   */
  async reopenStreams(): Promise<void> {
    if (this.closing) return;
    await Promise.all(
      this.streams
        .all()
        .map((s) =>
          this.mark(s.endpointId, s.sessionId, true).catch((err: unknown) =>
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
  private mark(endpointId: string, sessionId: string, open: boolean): Promise<void> {
    const previous = this.marks.get(sessionId) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(() => markStream(this.deps.sessions, endpointId, sessionId, open));
    this.marks.set(sessionId, next);
    void next
      .catch(() => undefined)
      .finally(() => {
        if (this.marks.get(sessionId) === next) this.marks.delete(sessionId);
      });
    return next;
  }

  private async connect(
    endpoint: Endpoint,
    sessionId: string,
    transport: StreamableHTTPServerTransport,
  ): Promise<RequestProtocol> {
    const server = this.deps.protocol(endpoint, sessionId);
    await server.connect(transport);
    return { transport, server };
  }
}
