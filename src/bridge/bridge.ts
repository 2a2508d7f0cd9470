// The stdio bridge (docs/design/mcp-surface.md, "The bridge"): one MCP session on a local
// transport (stdio in the CLI) proxied to a remote Switchboard `/mcp` over Streamable
// HTTP. It owns the remote session: opened on the local `initialize` with the local
// client's name and capabilities (so the server records the real client), answered with
// the remote's capabilities, serverInfo and instructions; requests and notifications
// forwarded verbatim both ways, results and JSON-RPC errors included; the remote's
// notification stream reopened with capped backoff when it drops, and a new remote
// session opened when the server has closed the old one. It does not parse flags, read
// files or touch process: the CLI (src/cli/bridge.ts) does.

import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  McpError,
  ResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ClientCapabilities,
  type Implementation,
  type JSONRPCRequest,
  type Notification,
  type ProgressNotification,
  type Result,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';

export interface BridgeOptions {
  /** The remote's MCP URL (…/mcp). */
  url: URL;
  /** The endpoint credential, sent as `Authorization: Bearer`. */
  token: string;
  /** One line per event. The CLI writes these to stderr: stdout is the protocol channel. */
  log: (line: string) => void;
}

/** First wait before reopening a dropped stream or session: quick enough for a server restart. */
const RETRY_INITIAL_MS = 1_000;
/** Longest wait between attempts: a server down for hours costs one request per 30 s per bridge. */
const RETRY_CAP_MS = 30_000;
/**
 * The bridge imposes no deadline of its own on a forwarded request: the client that sent it
 * has its timeout and cancels through the bridge. This is the largest delay a timer accepts.
 */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/** Capped exponential backoff with jitter, so bridges dropped together do not return together. */
export function retryDelayMs(attempt: number, random: number = Math.random()): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_INITIAL_MS * 2 ** attempt);
  return Math.round(ceiling * (0.5 + random / 2));
}

interface Upstream {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Set once the bridge has given this session up (closed by the server, or the bridge stops). */
  gone: boolean;
  /** Requests in flight on it: a gone session is closed only when they have settled. */
  inflight: number;
}

/** How a request is sent to one side; the SDK types the two sides' requests apart. */
type Send = (request: Pick<JSONRPCRequest, 'method' | 'params'>, options: RequestOptions) => Promise<Result>;

/** What forwarding needs of the request being answered: its cancellation and a way to report progress. */
interface Caller {
  signal: AbortSignal;
  sendNotification: (notification: ProgressNotification) => Promise<void>;
}

/** An error the SDK answers as a JSON-RPC error with exactly this code, message and data. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A remote JSON-RPC error unchanged; anything else (network, HTTP status) as the bridge's internal error. */
function asRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof McpError) {
    const prefix = `MCP error ${err.code}: `;
    const message = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
    return new RpcError(err.code, message, err.data);
  }
  if (err instanceof StreamableHTTPError && (err.code ?? 0) > 0) {
    const answer = `HTTP ${err.code}: ${reason(err.message.replace(/^Streamable HTTP error: [^:]*: /, ''))}`;
    return new RpcError(ErrorCode.InternalError, `switchboard bridge: the server answered ${answer}`);
  }
  const message = err instanceof Error ? err.message : String(err);
  // fetch says only "fetch failed"; its cause says why (ECONNREFUSED, bad port, …).
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : null;
  const why = cause ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : null;
  const detail = why ? `${message} (${why})` : message;
  return new RpcError(ErrorCode.InternalError, `switchboard bridge: ${detail}`);
}

/** The `{"error": {code, message}}` of an HTTP error body (API or JSON-RPC shape), else the text itself. */
function reason(body: string): string {
  try {
    const { error } = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const code = typeof error?.code === 'string' ? `${error.code}: ` : '';
    if (typeof error?.message === 'string') return code + error.message;
  } catch {
    // Not JSON: the text is the reason.
  }
  return body.slice(0, 300);
}

/** Forwards one request with the caller's cancellation, mapping progress back to the caller's token. */
async function forward(send: Send, request: JSONRPCRequest, extra: Caller): Promise<Result> {
  const { method, params } = request;
  const token = params?._meta?.progressToken;
  // Progress must reach the caller before the result: a client drops progress for a
  // request it has already seen answered. So the result waits for the progress sends.
  const sent: Array<Promise<void>> = [];
  const onprogress: RequestOptions['onprogress'] = (progress) => {
    const notification = {
      method: 'notifications/progress' as const,
      params: { ...progress, progressToken: token ?? 0 },
    };
    sent.push(extra.sendNotification(notification).catch(() => undefined));
  };
  const result = await send(
    { method, ...(params === undefined ? {} : { params }) },
    { signal: extra.signal, timeout: NO_TIMEOUT_MS, ...(token === undefined ? {} : { onprogress }) },
  );
  await Promise.all(sent);
  return result;
}

/** A response body that reports, once, when it ends, fails or is cancelled by the reader. */
function watched(body: ReadableStream<Uint8Array>, onEnd: (reason: string) => void): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  body.pipeTo(writable).then(
    () => onEnd('the server ended it'),
    (err: unknown) => onEnd(err instanceof Error ? err.message : String(err)),
  );
  return readable;
}

export class Bridge {
  private readonly server: Server;
  private local: Transport | null = null;
  private identity: { clientInfo: Implementation; capabilities: ClientCapabilities } | null = null;
  /** The remote session in use, or being opened. */
  private upstream: Promise<Upstream> | null = null;
  /** The last remote session opened, closed on stop even while a reopen is pending. */
  private current: Upstream | null = null;
  private streamAttempt = 0;
  /** Aborted on stop: ends every backoff wait. */
  private readonly halt = new AbortController();
  private stopped = false;

  constructor(private readonly options: BridgeOptions) {
    // This serverInfo is never sent: `initialize` is answered with the remote's (ping is answered here).
    this.server = new Server({ name: 'switchboard-bridge', version: '0' });
    this.server.setRequestHandler(InitializeRequestSchema, async (request) => {
      this.identity = { clientInfo: request.params.clientInfo, capabilities: request.params.capabilities };
      const { client } = await this.connected();
      const requested = request.params.protocolVersion;
      const instructions = client.getInstructions();
      return {
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
        capabilities: client.getServerCapabilities() ?? {},
        serverInfo: client.getServerVersion() ?? { name: 'switchboard', version: 'unknown' },
        ...(instructions === undefined ? {} : { instructions }),
      };
    });
    this.server.fallbackRequestHandler = (request, extra) => this.toRemote(request, extra);
    this.server.onerror = (err) => options.log(`local: ${err.message}`);
    this.server.fallbackNotificationHandler = async (notification) => {
      const { client } = await this.connected();
      await client.notification(notification);
    };
  }

  /** Serves the local side; the remote session opens when the local client initialises. */
  async start(local: Transport): Promise<void> {
    this.local = local;
    await this.server.connect(local);
  }

  /** Ends the remote session (DELETE, best effort) and the local transport. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.halt.abort();
    const upstream = this.current;
    if (upstream) {
      upstream.gone = true;
      await upstream.transport.terminateSession().catch(() => undefined);
      await upstream.client.close();
    }
    await this.server.close();
  }

  private async toRemote(request: JSONRPCRequest, extra: Caller): Promise<Result> {
    for (let attempt = 0; ; attempt++) {
      const upstream = await this.connected();
      upstream.inflight++;
      try {
        return await forward((r, o) => upstream.client.request(r, ResultSchema, o), request, extra);
      } catch (err) {
        // A 404 means the server never ran the request (its session is gone): safe to send again once.
        const sessionGone = err instanceof StreamableHTTPError && err.code === 404;
        if (!sessionGone || attempt > 0) throw asRpcError(err);
      } finally {
        if (--upstream.inflight === 0 && upstream.gone) void upstream.client.close().catch(() => undefined);
      }
    }
  }

  /** The open remote session, or the one being opened. */
  private connected(): Promise<Upstream> {
    if (this.stopped) return Promise.reject(new RpcError(ErrorCode.ConnectionClosed, 'the bridge is stopping'));
    this.upstream ??= this.open().catch((err: unknown) => {
      this.upstream = null;
      this.options.log(`could not open a session on ${this.options.url.href}: ${asRpcError(err).message}`);
      throw asRpcError(err);
    });
    return this.upstream;
  }

  private async open(): Promise<Upstream> {
    if (!this.identity) throw new RpcError(ErrorCode.InvalidRequest, 'initialize first');
    // The bridge exists to carry channel notifications to its client, so it declares the
    // capability for it: the server rings only sessions that declared it.
    const { capabilities } = this.identity;
    const declared = { ...capabilities, experimental: { ...capabilities.experimental, 'claude/channel': {} } };
    const client = new Client(this.identity.clientInfo, { capabilities: declared });
    const upstream: Upstream = {
      client,
      gone: false,
      inflight: 0,
      transport: new StreamableHTTPClientTransport(this.options.url, {
        requestInit: { headers: { Authorization: `Bearer ${this.options.token}` } },
        // The transport never reopens the stream itself: the bridge does, with its own backoff.
        reconnectionOptions: {
          maxRetries: 0,
          initialReconnectionDelay: 0,
          maxReconnectionDelay: 0,
          reconnectionDelayGrowFactor: 1,
        },
        fetch: (url, init) => this.observe(upstream, url, init),
      }),
    };
    client.fallbackNotificationHandler = (notification) => this.toLocal(notification);
    client.fallbackRequestHandler = (request, extra) =>
      forward((r, o) => this.server.request(r as ServerRequest, ResultSchema, o), request, extra).catch(
        (err: unknown) => {
          throw asRpcError(err);
        },
      );
    client.onerror = (err) => {
      // Stream losses are reported (and handled) by observe(), and a session given up is noise.
      if (!upstream.gone && !/^(Maximum reconnection attempts|SSE stream disconnected)/.test(err.message)) {
        this.options.log(`remote: ${err.message}`);
      }
    };
    await client.connect(upstream.transport);
    if (this.stopped) {
      upstream.gone = true;
      await client.close();
      throw new RpcError(ErrorCode.ConnectionClosed, 'the bridge is stopping');
    }
    this.current = upstream;
    return upstream;
  }

  /** Notifications from the remote go to the local client as they came, params untouched. */
  private async toLocal(notification: Notification): Promise<void> {
    await this.local?.send({ jsonrpc: '2.0', ...notification });
  }

  /**
   * The transport's fetch: watches the notification stream (GET) and every answer for a
   * closed session (404), which is where the SDK offers no hook of its own.
   */
  private async observe(upstream: Upstream, url: string | URL, init?: RequestInit): Promise<Response> {
    const hasSession = new Headers(init?.headers).has('mcp-session-id');
    const isStream = init?.method === 'GET';
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (err) {
      if (isStream) this.streamLost(upstream, err instanceof Error ? err.message : String(err));
      throw err;
    }
    if (response.status === 404 && hasSession) this.sessionGone(upstream);
    else if (isStream && response.status === 401) {
      this.options.log('the server refused the credential (401): no more notifications until the bridge restarts');
    } else if (isStream && !response.ok) this.streamLost(upstream, `HTTP ${response.status}`);
    if (!isStream || !response.ok || !response.body) return response;
    if (this.streamAttempt > 0) this.options.log('notification stream reopened');
    this.streamAttempt = 0;
    const body = watched(response.body, (reason) => this.streamLost(upstream, reason));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  private streamLost(upstream: Upstream, reason: string): void {
    if (upstream.gone || this.stopped) return;
    const delay = retryDelayMs(this.streamAttempt++);
    this.options.log(`notification stream lost (${reason}); reopening in ${delay} ms`);
    // Failures come back through observe(), which schedules the next attempt.
    sleep(delay, undefined, { signal: this.halt.signal }).then(
      () => (upstream.gone ? undefined : upstream.transport.resumeStream('').catch(() => undefined)),
      () => undefined,
    );
  }

  /** The server closed the session (idle, revoked, restarted without it): open a new one. */
  private sessionGone(upstream: Upstream): void {
    if (upstream.gone || this.stopped) return;
    upstream.gone = true;
    this.options.log('the server closed the session; opening a new one');
    if (upstream.inflight === 0) void upstream.client.close().catch(() => undefined);
    this.upstream = this.reopen(0);
    this.upstream.catch(() => undefined);
  }

  private async reopen(attempt: number): Promise<Upstream> {
    try {
      const upstream = await this.open();
      this.options.log('new session opened');
      return upstream;
    } catch (err) {
      if (this.stopped) throw err;
      const delay = retryDelayMs(attempt);
      this.options.log(`could not open a new session (${asRpcError(err).message}); retrying in ${delay} ms`);
      await sleep(delay, undefined, { signal: this.halt.signal });
      return this.reopen(attempt + 1);
    }
  }
}
