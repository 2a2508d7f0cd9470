// MCP revision 2026-07-28 on /mcp (docs/design/mcp-surface.md, "MCP 2026-07-28: stateless
// requests"). That revision has no sessions: no initialize, no Mcp-Session-Id, no GET
// stream; every request carries its protocol version, client info and capabilities in
// `params._meta` (the per-request envelope) and is answered on its own, as one JSON body or,
// when the handler sends a notification first, as an SSE stream of that one exchange.
//
// The v2 SDK serves it: `createMcpHandler` with `legacy: 'reject'` answers `server/discover`,
// validates the envelope and the standard headers (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name), stamps `resultType`, serves `subscriptions/listen` and streams request-scoped
// notifications. What is ours: which requests go there (`isModernRequest`, the SDK's own
// `isLegacyRequest` after a cheap pre-check, so 2025-11-25 sessions stay on the 1.x path
// untouched), the per-request MCP server (tools/list and tools/call over the one verb
// registry, under a fresh `mr_` id that names no session), progress while a call waits, and
// the hop between Fastify's Node request and the SDK's web Request and Response.
// Authentication, the rate limits, Host and Origin are checked before any of this, exactly
// as for sessions (server.ts).

import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  createMcpHandler,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  Server,
  type AuthInfo,
  type McpHttpHandler,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { newStatelessId } from '../domain/ids.js';
import type { Endpoint } from '../endpoints/credentials.js';
import type { VersionInfo } from '../version.js';
import { callTool, type ProtocolDeps } from './protocol.js';
import { toolsFor } from './verbs/index.js';

/** The first revision of the sessionless era; revision names are dates, so they compare as strings. */
const FIRST_STATELESS_REVISION = '2026-07-28';

/**
 * How often a waiting call with a progressToken reports progress. _Why 10 s_: a client
 * that resets its request timeout on progress (the v2 client's default timeout is 60 s,
 * the longest wait is 60 s) never times a wait out; and it is far apart enough to cost
 * nothing. Shorter only adds frames; longer than the client's timeout defeats it.
 */
const PROGRESS_MS = 10_000;

/**
 * What the SDK reports when it refuses a request (a bad envelope, a header that disagrees
 * with the body, an unsupported version, a 2025-era request sent here): the client's
 * mistake, answered to it, not a failure of this server.
 */
const REFUSAL = /^(Rejected |Unsupported protocol version|Missing required client capabilit)/;

/** Request headers not copied onto the web Request: the hop's own, and a length the body no longer has. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether the request could be a 2026-07-28 one: its body claims the per-request envelope
 * (`_meta` carries the protocol-version key) or its MCP-Protocol-Version header names that
 * era. Cheap, so the 2025-11-25 hot path pays a few property reads; the SDK decides.
 */
function claimsStateless(request: FastifyRequest): boolean {
  const version = request.headers['mcp-protocol-version'];
  if (typeof version === 'string' && version.trim() >= FIRST_STATELESS_REVISION) return true;
  const body = request.body;
  if (!isRecord(body) || !isRecord(body.params)) return false;
  const meta = body.params._meta;
  return isRecord(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

/**
 * The request as a web Request, without its body: the SDK is handed the body Fastify
 * already parsed (and limited to BODY_LIMIT), so it reads nothing twice.
 */
function webRequestOf(request: FastifyRequest, base: string, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(new URL(request.url, base), { method: request.method, headers, ...(signal ? { signal } : {}) });
}

/** A signal aborted when the client goes away before its answer is written (ends a waiting call). */
function abortedOnClose(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function endpointOf(authInfo: AuthInfo | undefined): Endpoint {
  const endpoint = authInfo?.extra?.endpoint as Endpoint | undefined;
  if (!endpoint)
    throw new AppError('internal', 'a stateless MCP request reached a verb without an authenticated endpoint');
  return endpoint;
}

export function statelessInstructions(version: VersionInfo, leaseSeconds: number): string {
  return [
    `Switchboard ${version.version} (commit ${version.commit}) — a durable work queue for this agent.`,
    '',
    'Contract (MCP 2026-07-28, no session):',
    '- Take work with claim_next (or claim by id), do it, then complete it.',
    '- Waiting for work: call claim_next with wait_seconds (up to 60); it answers as soon as a todo is ready, ' +
      'or {"empty": true} at the deadline. There is no doorbell without a session.',
    `- A claim holds a lease of ${leaseSeconds} s unless you pass lease_seconds; heartbeat before any long step.`,
    '- A claim answers a lease_token. Every request here stands alone, so pass it with the id to heartbeat, ' +
      'complete, fail and release: it is what says you hold the todo. complete and fail take a summary (and an ' +
      'artifact: a URL, a commit) that the next claim of the todo sees in prior_attempts.',
    '- `conflict` from heartbeat, complete, fail or release says why: if you lost the todo, stop working on it.',
    '- Every claim ends in complete, fail (it is retried later) or release (it goes back untouched).',
    '- Errors are tool results with {"error": {"code", "message"}}; `invalid_argument` names the field to fix.',
  ].join('\n');
}

/**
 * While a call that waits (wait_seconds > 0) runs, `notifications/progress` on its own
 * response stream at once and every PROGRESS_MS — only when the client asked for progress
 * (a progressToken). Returns the function that stops it.
 */
function progressWhileWaiting(ctx: ServerContext, args: Record<string, unknown> | undefined): () => void {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const seconds = args?.wait_seconds;
  if (progressToken === undefined || typeof seconds !== 'number' || !(seconds > 0)) return () => undefined;
  const started = Date.now();
  const report = () => {
    const waited = Math.min(seconds, Math.round((Date.now() - started) / 1000));
    void ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: { progressToken, progress: waited, total: seconds, message: 'waiting for work' },
      })
      .catch(() => undefined);
  };
  report();
  const timer = setInterval(report, PROGRESS_MS);
  return () => clearInterval(timer);
}

/** The MCP server answering one stateless request of an endpoint; every call acts under one new `mr_` id. */
export function buildStatelessProtocol(deps: ProtocolDeps, endpoint: Endpoint): Server {
  const leaseSeconds = endpoint.default_lease_seconds ?? deps.todos.defaultLeaseSeconds;
  const server = new Server(
    { name: 'switchboard', version: deps.version.version },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: statelessInstructions(deps.version, leaseSeconds),
    },
  );
  const sessionId = newStatelessId();
  server.setRequestHandler('tools/list', () => ({ tools: toolsFor(endpoint.verbs, true) }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const args = request.params.arguments;
    const stop = progressWhileWaiting(ctx, args);
    try {
      const traceparent = ctx.mcpReq._meta?.traceparent;
      const result = await callTool(
        deps,
        endpoint,
        sessionId,
        request.params.name,
        args,
        () => ctx.mcpReq.signal,
        typeof traceparent === 'string' ? traceparent : undefined,
      );
      return result;
    } finally {
      stop();
    }
  });
  return server;
}

export interface StatelessDeps {
  protocol: ProtocolDeps;
  /** Where the web Requests handed to the SDK say they were sent (their URL is not used to route). */
  publicUrl: string;
  /** Failures on the 2026-07-28 leg (a refused request is a client's mistake and is not reported). */
  onerror: (err: Error) => void;
}

/** The 2026-07-28 leg of /mcp: one v2 SDK handler for this instance. */
export class StatelessMcp {
  readonly #handler: McpHttpHandler;

  constructor(private readonly deps: StatelessDeps) {
    this.#handler = createMcpHandler(({ authInfo }) => buildStatelessProtocol(deps.protocol, endpointOf(authInfo)), {
      legacy: 'reject',
      onerror: (err) => {
        if (!REFUSAL.test(err.message)) deps.onerror(err);
      },
    });
  }

  /**
   * Whether this is a 2026-07-28 request: a POST the SDK's own classification does not call
   * legacy, or a GET or DELETE without a session whose MCP-Protocol-Version names that era
   * (the revision has no GET stream and no session to delete: the handler answers 405).
   */
  async claims(request: FastifyRequest): Promise<boolean> {
    if (!claimsStateless(request)) return false;
    if (request.method !== 'POST') return request.headers['mcp-session-id'] === undefined;
    return !(await isLegacyRequest(webRequestOf(request, this.deps.publicUrl), request.body));
  }

  /** Answers the request through the SDK, as `authInfo` (the endpoint authenticated by server.ts). */
  async serve(request: FastifyRequest, reply: FastifyReply, authInfo: AuthInfo): Promise<FastifyReply> {
    const web = webRequestOf(request, this.deps.publicUrl, abortedOnClose(reply));
    const response = await this.#handler.fetch(web, { authInfo, parsedBody: request.body });
    reply.code(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    if (!response.body) return reply.send();
    return reply.send(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
  }

  /** Ends open `subscriptions/listen` streams and in-flight exchanges (shutdown). */
  close(): Promise<void> {
    return this.#handler.close();
  }
}
