// The MCP session registry of this instance. mcp_sessions (via src/sessions) is the
// truth; between requests this instance keeps only the notification streams it holds
// (the LocalStreams service, src/sessions/local-streams.ts). The SDK Server and transport that answer a POST are built for that one
// request — any instance serves any live session of the caller's endpoint, already
// initialised, the same way — and closed when its answer is done, so a session that is
// only listening holds no SDK objects at all.
// A session id of another endpoint, unknown or closed, is "not found" (404).

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { newSessionId } from '../domain/ids.js';
import type { Endpoint } from '../endpoints/credentials.js';
import { closeSession, discardSession, openSession, type SessionDeps } from '../sessions/index.js';
import type { LocalStreams } from '../sessions/local-streams.js';
import type { ErrorLog } from './errors.js';

/** The SDK objects that answer one POST; `close` them once its answer is done. */
/** What an initialize said of its client (src/mcp/server.ts reads it from the request). */
export interface ClientDeclared {
  info: { name?: unknown; version?: unknown } | null;
  /** It declared the `claude/channel` experimental capability. */
  channel: boolean;
}

export interface RequestProtocol {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Run once when the request is released (an initialize the SDK refused discards its row). */
  settle?: () => Promise<void>;
}

export interface RegistryDeps {
  sessions: SessionDeps;
  streams: LocalStreams;
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
  readonly #inFlight = new Set<RequestProtocol>();

  constructor(private readonly deps: RegistryDeps) {}

  /**
   * The SDK objects for an initialize request, or the session cap it met. The row is
   * written first, counted against `maxLive` live sessions of the endpoint on every
   * instance; when the SDK then refuses the request (it never mints the id) the row is
   * discarded as the request is released, so a refused initialize leaves nothing behind.
   */
  async initialize(
    endpoint: Endpoint,
    client: ClientDeclared,
    maxLive: number,
    oauthGrantId?: string,
  ): Promise<RequestProtocol | { full: { live: number; max: number } }> {
    const sessionId = newSessionId();
    const opened = await openSession(this.deps.sessions, {
      endpointId: endpoint.id,
      id: sessionId,
      clientInfo: client.info,
      channel: client.channel,
      maxLive,
      ...(oauthGrantId !== undefined ? { oauthGrantId } : {}),
    });
    if (!opened.ok) return { full: { live: opened.live, max: opened.max } };
    let minted = false;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      onsessioninitialized: () => {
        minted = true;
      },
    });
    const sdk = await this.connect(endpoint, sessionId, transport).catch(async (err: unknown) => {
      await discardSession(this.deps.sessions, endpoint.id, sessionId);
      throw err;
    });
    sdk.settle = async () => {
      if (!minted) await discardSession(this.deps.sessions, endpoint.id, sessionId);
    };
    return sdk;
  }

  /** The SDK objects for one POST of a live session (check `isLive` first), as if initialised here. */
  async adopt(endpoint: Endpoint, sessionId: string): Promise<RequestProtocol> {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => sessionId });
    adoptSession(transport, sessionId);
    return this.connect(endpoint, sessionId, transport);
  }

  /** Ends one request's SDK objects (once, however often it is called); a failure is logged, never thrown. */
  async release(protocol: RequestProtocol): Promise<void> {
    if (!this.#inFlight.delete(protocol)) return;
    await protocol.server
      .close()
      .catch((err: unknown) => this.deps.log.error({ err }, 'closing an MCP request failed'));
    await protocol
      .settle?.()
      .catch((err: unknown) => this.deps.log.error({ err }, 'discarding a refused MCP session failed'));
  }

  /**
   * SDK objects built for requests and not yet released: what /mcp holds in memory for
   * requests being answered. A session between requests holds none.
   */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Whether this endpoint may use this session, given what mcp_sessions says of it
   * (`rowLive`); a closed session's stream here is ended.
   */
  async isLive(endpoint: Endpoint, sessionId: string, rowLive: boolean): Promise<boolean> {
    const holder = this.deps.streams.holder(sessionId);
    if (!rowLive && holder === endpoint.id) this.deps.streams.end(sessionId);
    return rowLive && (holder === undefined || holder === endpoint.id);
  }

  /** DELETE: closes the row and ends this instance's stream of it. */
  async close(endpoint: Endpoint, sessionId: string): Promise<boolean> {
    const holder = this.deps.streams.holder(sessionId);
    if (holder !== undefined && holder !== endpoint.id) return false;
    const closed = await closeSession(this.deps.sessions, endpoint.id, sessionId);
    this.deps.streams.end(sessionId);
    return closed !== null;
  }

  private async connect(
    endpoint: Endpoint,
    sessionId: string,
    transport: StreamableHTTPServerTransport,
  ): Promise<RequestProtocol> {
    const server = this.deps.protocol(endpoint, sessionId);
    await server.connect(transport);
    const protocol: RequestProtocol = { transport, server };
    this.#inFlight.add(protocol);
    return protocol;
  }
}
