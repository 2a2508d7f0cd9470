// The MCP session registry of this instance. mcp_sessions (via src/sessions) is the
// truth; this class keeps the SDK transport + Server of each session this instance has
// served. Any instance serves a POST for any live session of the caller's endpoint: when
// it has no transport for the id it rebuilds one, already initialised, for that id.
// A session id of another endpoint, unknown or closed, is "not found" (404).

import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { newId } from '../domain/ids.js';
import type { Endpoint } from '../endpoints/credentials.js';
import { closeSession, markStream, openSession, type SessionDeps } from '../sessions/index.js';
import type { ErrorLog } from './errors.js';

export interface LocalSession {
  endpointId: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
}

export interface RegistryDeps {
  sessions: SessionDeps;
  log: ErrorLog;
  /** A fresh MCP Server for one session of an endpoint. */
  protocol: (endpoint: Endpoint, sessionId: string) => Server;
}

/**
 * Marks a new transport as initialised for a known session id. The SDK has no public
 * way to resume a session on another process, so this sets the two fields its session
 * check reads; the cross-instance test fails loudly if a new SDK version moves them.
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

/**
 * Whether the transport's standalone (GET) stream is registered, waiting up to
 * `timeoutMs`: a notification sent before that is dropped by the SDK without an error.
 * Reads a private field like adoptSession; when the shape is unknown it cannot tell and
 * answers true.
 */
async function streamReady(transport: StreamableHTTPServerTransport, timeoutMs: number): Promise<boolean> {
  const inner = (transport as unknown as { _webStandardTransport?: { _streamMapping?: Map<string, unknown> } })
    ._webStandardTransport;
  const mapping = inner?._streamMapping;
  if (!(mapping instanceof Map)) return true;
  for (const deadline = Date.now() + timeoutMs; !mapping.has('_GET_stream');) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

export class SessionRegistry {
  private readonly local = new Map<string, LocalSession>();
  /** Sessions whose notification stream is open on this instance → their endpoint. */
  private readonly streams = new Map<string, string>();
  /** The last stream mark written per session, so marks apply in order and shutdown can wait for them. */
  private readonly marks = new Map<string, Promise<void>>();
  private closing = false;

  constructor(private readonly deps: RegistryDeps) {}

  /** A transport for an initialize request; the session row is written when the SDK mints the id. */
  async initialize(endpoint: Endpoint, clientInfo: { name?: unknown; version?: unknown } | null) {
    const sessionId = newId('ms');
    let entry: LocalSession | null = null;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      // Registered only once the row exists: a refused initialize leaves nothing behind.
      onsessioninitialized: async (id) => {
        await openSession(this.deps.sessions, { endpointId: endpoint.id, id, clientInfo });
        if (entry) this.local.set(id, entry);
      },
    });
    entry = await this.attach(endpoint, sessionId, transport, false);
    return entry;
  }

  /**
   * This endpoint's live session with a transport on this instance (rebuilt when another
   * instance served it before), or null. `rowLive` is what mcp_sessions says of it.
   */
  async find(endpoint: Endpoint, sessionId: string, rowLive: boolean): Promise<LocalSession | null> {
    if (!(await this.isLive(endpoint, sessionId, rowLive))) return null;
    const known = this.local.get(sessionId);
    if (known) return known;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => sessionId });
    adoptSession(transport, sessionId);
    return this.attach(endpoint, sessionId, transport, true);
  }

  /**
   * Whether this endpoint may use this session, given what mcp_sessions says of it
   * (`rowLive`); a closed session's transport here is dropped. No transport is built:
   * enough for the direct tools/call path.
   */
  async isLive(endpoint: Endpoint, sessionId: string, rowLive: boolean): Promise<boolean> {
    const known = this.local.get(sessionId);
    if (!rowLive && known?.endpointId === endpoint.id) await this.drop(sessionId);
    return rowLive && (!known || known.endpointId === endpoint.id);
  }

  /** DELETE: closes the row and this instance's transport (ending its stream). */
  async close(endpoint: Endpoint, sessionId: string): Promise<boolean> {
    const known = this.local.get(sessionId);
    if (known && known.endpointId !== endpoint.id) return false;
    const closed = await closeSession(this.deps.sessions, endpoint.id, sessionId);
    await this.drop(sessionId);
    return closed !== null;
  }

  /**
   * Another instance (or this one) closed a session, or revoked its endpoint: end what
   * this instance holds for it. The rows are already closed; this only drops transports.
   */
  async forget(event: { endpointId: string; sessionId?: string }): Promise<void> {
    const ids = [...this.local].filter(
      ([id, entry]) =>
        entry.endpointId === event.endpointId && (event.sessionId === undefined || id === event.sessionId),
    );
    for (const [id] of ids) {
      this.streams.delete(id);
      await this.drop(id);
    }
  }

  /**
   * Writes a channel notification to the session's stream held by this instance. False
   * when this instance holds no stream for it (or it does not come up within 500 ms of
   * opening): the caller counts that as a failed write.
   */
  async ring(sessionId: string, params: { content: string; meta: Record<string, string> }): Promise<boolean> {
    const entry = this.local.get(sessionId);
    if (!entry || !this.streams.has(sessionId) || !(await streamReady(entry.transport, 500))) return false;
    await entry.server.notification({ method: 'notifications/claude/channel', params });
    return true;
  }

  /** Records an open stream; ordered after any earlier mark of the same session. */
  streamOpened(endpointId: string, sessionId: string): Promise<void> {
    this.streams.set(sessionId, endpointId);
    return this.mark(endpointId, sessionId, true);
  }

  streamClosed(endpointId: string, sessionId: string): void {
    // On shutdown closeAll has recorded it already, before the pool goes away.
    if (this.closing) return;
    this.streams.delete(sessionId);
    this.mark(endpointId, sessionId, false).catch((err: unknown) =>
      this.deps.log.error({ err, session: sessionId }, 'could not mark a stream closed'),
    );
  }

  /**
   * Marks every stream this instance holds as open again: another instance took this one
   * for dead (a stall longer than the dead-after threshold) and marked them closed.
   */
  async reopenStreams(): Promise<void> {
    if (this.closing) return;
    await Promise.all(
      [...this.streams].map(([sessionId, endpointId]) =>
        this.mark(endpointId, sessionId, true).catch((err: unknown) =>
          this.deps.log.error({ err, session: sessionId }, 'could not mark a stream open again'),
        ),
      ),
    );
  }

  /** Shutdown: record this instance's streams as closed, then end every stream and transport here. */
  async closeAll(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.marks.values()].map((m) => m.catch(() => undefined)));
    await Promise.all(
      [...this.streams].map(([sessionId, endpointId]) =>
        markStream(this.deps.sessions, endpointId, sessionId, false).catch((err: unknown) =>
          this.deps.log.error({ err, session: sessionId }, 'could not mark a stream closed'),
        ),
      ),
    );
    this.streams.clear();
    await Promise.all([...this.local.keys()].map((id) => this.drop(id)));
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

  private async attach(
    endpoint: Endpoint,
    sessionId: string,
    transport: StreamableHTTPServerTransport,
    register: boolean,
  ): Promise<LocalSession> {
    const server = this.deps.protocol(endpoint, sessionId);
    const entry: LocalSession = { endpointId: endpoint.id, transport, server };
    if (register) this.local.set(sessionId, entry);
    server.onclose = () => {
      if (this.local.get(sessionId) === entry) this.local.delete(sessionId);
    };
    await server.connect(transport);
    return entry;
  }

  private async drop(sessionId: string): Promise<void> {
    const entry = this.local.get(sessionId);
    if (!entry) return;
    this.local.delete(sessionId);
    await entry.server.close().catch((err: unknown) => this.deps.log.error({ err }, 'closing an MCP session failed'));
  }
}
