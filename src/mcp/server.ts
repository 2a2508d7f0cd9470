// POST|GET|DELETE /mcp: the MCP Streamable HTTP surface (docs/design/mcp-surface.md).
// Each request is authenticated by its `sbk_…` bearer. A POST goes to SDK objects built
// for it — new ones for `initialize`, ones adopting the session for a known session id —
// unless it is a direct tools/call or notification (direct-call.ts). GET opens the
// session's notification stream, which this instance writes itself (streams.ts) and
// records as stream_open while it lasts (the LocalStreams service); DELETE closes the
// session. The doorbell, which writes to those streams, is not here. Every request passes
// the limits first (limits.ts: per address before authentication, per credential after
// it), and an initialize at the endpoint's live-session cap evicts an idle session, or
// answers 429 when every one is busy. A POST that is an MCP 2026-07-28 request
// (per-request envelope, no session) goes to modern.ts instead.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Services } from '../services.js';
import { authenticateMcp, type Caller } from './auth.js';
import { McpLimits, refuse } from './limits.js';
import { directCallOf, invalidParamsOf, isDirectNotification } from './direct-call.js';
import { authInfoFor, buildProtocol, callTool, type ProtocolDeps } from './protocol.js';
import { jsonRpcAnswer, type ErrorLog } from './errors.js';
import { SessionRegistry, type ClientDeclared, type RequestProtocol } from './sessions.js';
import { StatelessMcp } from './modern.js';
import type { BusEvent } from '../domain/events.js';
import { mcpScope, NOT_JSON, REFUSED, rpcError } from './scope.js';

/** What the routes use of the services. */
interface McpDeps {
  credentials: Services['credentials'];
  limits: McpLimits;
  streams: Services['streams'];
  log: ErrorLog;
  /** The whole origins served (config.allowedOrigins), which a browser's Origin must be one of. */
  allowedOrigins: readonly string[];
  /** The MCP 2026-07-28 leg: stateless requests, routed by what they say. */
  stateless: StatelessMcp;
}

/** JSON-RPC error codes the SDK uses for session problems, kept so clients see one dialect. */
const SESSION_REQUIRED = -32000;
const SESSION_NOT_FOUND = -32001;
const PARSE_ERROR = -32700;
const INVALID_PARAMS = -32602;

/** What a request without Mcp-Session-Id that is not `initialize` is told to do. */
const SESSION_REQUIRED_MESSAGE =
  'Bad Request: Mcp-Session-Id header is required: send `initialize` first (without the header), ' +
  'then pass the Mcp-Session-Id it answers on every later request';

function sessionIdOf(request: FastifyRequest): string | null {
  const value = request.headers['mcp-session-id'];
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * What an initialize says of its client: its clientInfo, and whether it declared the
 * `claude/channel` experimental capability (the doorbell rings only sessions that did,
 * docs/design/doorbell-acknowledgement.md, "Who is rung").
 */
function clientOf(body: unknown): ClientDeclared {
  const params = (body as { params?: { clientInfo?: unknown; capabilities?: { experimental?: unknown } } }).params;
  const info = params?.clientInfo;
  const experimental = params?.capabilities?.experimental;
  const channel =
    typeof experimental === 'object' && experimental !== null && Object.hasOwn(experimental, 'claude/channel');
  return { info: info && typeof info === 'object' ? info : null, channel };
}

/**
 * A signal aborted when the client goes away before its answer is written: made only when
 * a verb asks for it (a waiting call), so the direct path's other calls pay nothing.
 */
function abortedOnClose(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const closed = () => {
    if (!reply.raw.writableFinished) controller.abort();
  };
  if (reply.raw.destroyed) closed();
  else reply.raw.once('close', closed);
  return controller.signal;
}

/** Hands the raw request to the SDK objects built for it; the reply is theirs from here on, and they end with it. */
async function handOver(
  log: ErrorLog,
  registry: SessionRegistry,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: Caller,
  sdk: RequestProtocol,
) {
  reply.hijack();
  const raw = Object.assign(request.raw, { auth: authInfoFor(caller.endpoint, caller.token) });
  // The client went away before the answer: closing the SDK objects aborts the handler's
  // signal, which ends a waiting claim_next / next_message at once.
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) void registry.release(sdk);
  });
  try {
    await sdk.transport.handleRequest(raw, reply.raw, request.body);
  } catch (err) {
    log.error({ err }, 'MCP request failed');
    if (!reply.raw.headersSent) reply.raw.writeHead(500).end();
  } finally {
    await registry.release(sdk);
  }
}

/** The caller's live session named by Mcp-Session-Id, or null after answering 400/404. */
async function knownSession(registry: SessionRegistry, request: FastifyRequest, reply: FastifyReply, caller: Caller) {
  const sessionId = sessionIdOf(request);
  if (!sessionId) {
    await rpcError(reply, 400, SESSION_REQUIRED, SESSION_REQUIRED_MESSAGE);
    return null;
  }
  if (!(await registry.isLive(caller.endpoint, sessionId, caller.sessionLive === true))) {
    await rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
    return null;
  }
  return sessionId;
}

/** Why the SDK's transport would refuse this GET (status and message), or null. */
function streamRefusal(request: FastifyRequest): { status: number; message: string } | null {
  const accept = request.headers.accept;
  if (typeof accept !== 'string' || !accept.includes('text/event-stream')) {
    return { status: 406, message: 'Not Acceptable: Client must accept text/event-stream' };
  }
  const version = request.headers['mcp-protocol-version'];
  if (version !== undefined && !(typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) {
    const supported = SUPPORTED_PROTOCOL_VERSIONS.join(', ');
    return {
      status: 400,
      message: `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${supported})`,
    };
  }
  return null;
}

/** GET: the session's notification stream, held open until either side ends it. */
async function openStream(
  deps: McpDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: Caller,
  sessionId: string,
) {
  const refusal = streamRefusal(request);
  if (refusal) return rpcError(reply, refusal.status, REFUSED, refusal.message);
  const stream = deps.streams.reserve(caller.endpoint.id, sessionId, reply.raw);
  if (!stream) return rpcError(reply, 409, REFUSED, 'Conflict: Only one SSE stream is allowed per session');
  reply.raw.on('close', () => deps.streams.closed(stream));
  const answered = await deps.streams.opened(stream);
  if (!answered && !reply.raw.destroyed) return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
  reply.hijack();
  return reply;
}

function routes(scope: FastifyInstance, deps: McpDeps, protocol: ProtocolDeps, registry: SessionRegistry): void {
  mcpScope(scope, deps.allowedOrigins);
  scope.post('/mcp', async (request, reply) => {
    const caller = await authenticateMcp(deps.credentials, deps.limits, request, reply, sessionIdOf(request));
    if (!caller) return reply;
    if (request.body === NOT_JSON || request.body === undefined) {
      return rpcError(reply, 400, PARSE_ERROR, 'Parse error: the body must be JSON-RPC');
    }
    if (await deps.stateless.claims(request)) {
      return deps.stateless.serve(request, reply, authInfoFor(caller.endpoint, caller.token));
    }
    if (sessionIdOf(request) === null && isInitializeRequest(request.body)) {
      const sdk = await registry.initialize(
        caller.endpoint,
        clientOf(request.body),
        deps.limits.sessionsPerEndpoint,
        caller.grantId,
      );
      if ('full' in sdk) return refuse(reply, deps.limits.sessionCap(sdk.full.live, sdk.full.max));
      return handOver(deps.log, registry, request, reply, caller, sdk);
    }
    const sessionId = sessionIdOf(request);
    const call = sessionId === null ? null : directCallOf(request);
    const notification = sessionId !== null && !call && isDirectNotification(request);
    if (sessionId !== null && (call || notification)) {
      if (!(await registry.isLive(caller.endpoint, sessionId, caller.sessionLive === true))) {
        return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
      }
      if (!call) return reply.status(202).send();
      const result = await callTool(
        protocol,
        caller.endpoint,
        sessionId,
        call.name,
        call.args,
        () => abortedOnClose(reply),
        call.traceparent,
      );
      return reply.header('mcp-session-id', sessionId).type('application/json').send(jsonRpcAnswer(call.id, result));
    }
    const known = await knownSession(registry, request, reply, caller);
    if (!known) return reply;
    const invalid = invalidParamsOf(request);
    if (invalid) {
      return reply.header('mcp-session-id', known).send({
        jsonrpc: '2.0',
        id: invalid.id,
        error: { code: INVALID_PARAMS, message: 'Invalid params: they do not match the method (see the MCP schema)' },
      });
    }
    return handOver(deps.log, registry, request, reply, caller, await registry.adopt(caller.endpoint, known));
  });

  scope.get('/mcp', async (request, reply) => {
    const caller = await authenticateMcp(deps.credentials, deps.limits, request, reply, sessionIdOf(request));
    if (!caller) return reply;
    if (await deps.stateless.claims(request))
      return deps.stateless.serve(request, reply, authInfoFor(caller.endpoint, caller.token));
    const known = await knownSession(registry, request, reply, caller);
    if (!known) return reply;
    return openStream(deps, request, reply, caller, known);
  });

  scope.delete('/mcp', async (request, reply) => {
    const caller = await authenticateMcp(deps.credentials, deps.limits, request, reply, sessionIdOf(request));
    if (!caller) return reply;
    if (await deps.stateless.claims(request))
      return deps.stateless.serve(request, reply, authInfoFor(caller.endpoint, caller.token));
    const sessionId = sessionIdOf(request);
    if (!sessionId) return rpcError(reply, 400, SESSION_REQUIRED, 'Bad Request: Mcp-Session-Id header is required');
    if (!(await registry.close(caller.endpoint, sessionId))) {
      return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
    }
    return reply.status(200).send();
  });
}

/**
 * Registers /mcp on the host; closes of sessions and revokes on any instance end local
 * streams. Returns the session registry (what it holds in memory is a test's to read).
 */
export function mcpRoutes(app: FastifyInstance, services: Services): SessionRegistry {
  const { sessions, streams, log } = services;
  const protocol: ProtocolDeps = {
    todos: services.todos,
    sessions,
    messages: services.messages,
    waiters: services.waiters,
    version: services.version,
    publicUrl: services.config.publicUrl,
    log,
    hookGuard: services.hookGuard,
    keyring: services.keyring,
    routing: services.config.routing,
    handoff: services.config.handoff,
    validator: new AjvJsonSchemaValidator(),
    tracing: services.tracing,
  };
  const registry = new SessionRegistry({
    sessions,
    streams,
    log,
    protocol: (endpoint, sessionId) => buildProtocol(protocol, endpoint, sessionId),
  });
  const forget = (event: BusEvent<'session_closed' | 'endpoint_revoked'>) => {
    const sessionId = event.type === 'session_closed' ? event.session_id : undefined;
    services.credentials.forget(event.endpoint_id, sessionId);
    streams.forget({ endpointId: event.endpoint_id, sessionId });
  };
  const unsubscribe = [
    services.bus.subscribe('session_closed', forget),
    services.bus.subscribe('endpoint_revoked', forget),
    // A rotation ends no session or stream: only the answers reused for the old credential.
    services.bus.subscribe('endpoint_changed', (event) => services.credentials.forget(event.endpoint_id)),
  ];
  const stateless = new StatelessMcp({
    protocol,
    publicUrl: services.config.publicUrl,
    onerror: (err) => log.error({ err }, 'MCP 2026-07-28 request failed'),
  });
  app.addHook('onClose', async () => {
    unsubscribe.forEach((u) => u());
    await stateless.close();
  });
  // Streams and waiting calls stay open until closed: shutdown ends them first, or
  // app.close() would wait on them.
  app.addHook('preClose', () => {
    services.waiters.close();
    return streams.closeAll();
  });
  const limits = new McpLimits(services.config.mcp, () => services.clock().getTime());
  const deps: McpDeps = {
    credentials: services.credentials,
    limits,
    streams,
    log,
    allowedOrigins: services.config.allowedOrigins,
    stateless,
  };
  void app.register(async (scope) => routes(scope, deps, protocol, registry));
  return registry;
}
