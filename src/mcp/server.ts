// POST|GET|DELETE /mcp: the MCP Streamable HTTP surface (docs/design/mcp-surface.md).
// Each request is authenticated by its `sbk_…` bearer, then handed to the session's SDK
// transport: a new one for `initialize`, this instance's or a rebuilt one for a known
// session id. GET opens the session's notification stream (recorded as stream_open while
// it lasts); DELETE closes the session. The doorbell, which writes to those streams, is
// not here.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Queryable } from '../db/pool.js';
import type { SessionDeps } from '../sessions/index.js';
import type { TodoDeps } from '../todos/index.js';
import type { Metrics } from '../metrics/index.js';
import type { MessageDeps } from '../messages/context.js';
import type { VersionInfo } from '../version.js';
import { authenticateMcp, type Caller } from './auth.js';
import { forgetCredentials } from '../endpoints/credentials.js';
import type { ErrorLog } from './errors.js';
import { directCallOf, invalidParamsOf } from './direct-call.js';
import { authInfoFor, buildProtocol, callTool, type ProtocolDeps } from './protocol.js';
import { SessionRegistry, type LocalSession } from './sessions.js';
import type { HookGuard } from '../hooks/guard.js';
import type { Bus, BusEvent } from '../domain/events.js';

export interface McpDeps {
  db: Queryable;
  /** When set, session closes and endpoint revocations on any instance end local streams. */
  bus?: Bus;
  /** How long a (credential, live session) answer is reused; CREDENTIAL_REUSE_MS by default. */
  credentialReuseMs?: number;
  /** Told when a session's notification stream opens here (the doorbell rings it). */
  onStreamOpen?: (endpointId: string, sessionId: string) => void;
  /** Told when a session's notification stream here closes (its in-flight message returns). */
  onStreamClose?: (endpointId: string, sessionId: string) => void;
  messages: MessageDeps;
  defaultLeaseSeconds: number;
  metrics?: Metrics;
  instanceId: string;
  version: VersionInfo;
  log: ErrorLog;
  hookGuard?: HookGuard;
}

/** JSON-RPC error codes the SDK uses for session problems, kept so clients see one dialect. */
const SESSION_REQUIRED = -32000;
const SESSION_NOT_FOUND = -32001;
const PARSE_ERROR = -32700;
const INVALID_PARAMS = -32602;

/** The body of a POST that was not JSON: answered as a JSON-RPC parse error, not an API error. */
const NOT_JSON = Symbol('not JSON');

function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.status(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function sessionIdOf(request: FastifyRequest): string | null {
  const value = request.headers['mcp-session-id'];
  return typeof value === 'string' && value !== '' ? value : null;
}

function clientInfoOf(body: unknown): { name?: unknown; version?: unknown } | null {
  const params = (body as { params?: { clientInfo?: unknown } }).params;
  const info = params?.clientInfo;
  return info && typeof info === 'object' ? info : null;
}

/** Lenient JSON for /mcp only: an empty body (a DELETE or GET sent with a JSON content type) is none. */
function jsonBodies(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(null, NOT_JSON);
    }
  });
}

/** Hands the raw request to the SDK; the reply is the transport's from here on. */
async function handOver(
  log: ErrorLog,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: Caller,
  session: LocalSession,
) {
  reply.hijack();
  const raw = Object.assign(request.raw, { auth: authInfoFor(caller.endpoint, caller.token) });
  try {
    await session.transport.handleRequest(raw, reply.raw, request.body);
  } catch (err) {
    log.error({ err }, 'MCP request failed');
    if (!reply.raw.headersSent) reply.raw.writeHead(500).end();
  }
}

/** The caller's live session named by Mcp-Session-Id, or null after answering 400/404. */
async function knownSession(registry: SessionRegistry, request: FastifyRequest, reply: FastifyReply, caller: Caller) {
  const sessionId = sessionIdOf(request);
  if (!sessionId) {
    await rpcError(reply, 400, SESSION_REQUIRED, 'Bad Request: Mcp-Session-Id header is required');
    return null;
  }
  const session = await registry.find(caller.endpoint, sessionId, caller.sessionLive === true);
  if (!session) await rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
  return session ? { sessionId, session } : null;
}

function routes(scope: FastifyInstance, deps: McpDeps, protocol: ProtocolDeps, registry: SessionRegistry): void {
  jsonBodies(scope);
  scope.post('/mcp', async (request, reply) => {
    const caller = await authenticateMcp(deps.db, request, reply, sessionIdOf(request), deps.credentialReuseMs);
    if (!caller) return reply;
    if (request.body === NOT_JSON || request.body === undefined) {
      return rpcError(reply, 400, PARSE_ERROR, 'Parse error: the body must be JSON-RPC');
    }
    if (sessionIdOf(request) === null && isInitializeRequest(request.body)) {
      const session = await registry.initialize(caller.endpoint, clientInfoOf(request.body));
      return handOver(deps.log, request, reply, caller, session);
    }
    const sessionId = sessionIdOf(request);
    const call = sessionId === null ? null : directCallOf(request);
    if (sessionId !== null && call) {
      if (!(await registry.isLive(caller.endpoint, sessionId, caller.sessionLive === true))) {
        return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
      }
      const result = await callTool(protocol, caller.endpoint, sessionId, call.name, call.args);
      return reply
        .header('mcp-session-id', sessionId)
        .type('application/json')
        .send({ jsonrpc: '2.0', id: call.id, result });
    }
    const known = await knownSession(registry, request, reply, caller);
    if (!known) return reply;
    const invalid = invalidParamsOf(request);
    if (invalid) {
      return reply.header('mcp-session-id', known.sessionId).send({
        jsonrpc: '2.0',
        id: invalid.id,
        error: { code: INVALID_PARAMS, message: 'Invalid params: they do not match the method (see the MCP schema)' },
      });
    }
    return handOver(deps.log, request, reply, caller, known.session);
  });

  scope.get('/mcp', async (request, reply) => {
    const caller = await authenticateMcp(deps.db, request, reply, sessionIdOf(request), deps.credentialReuseMs);
    if (!caller) return reply;
    const known = await knownSession(registry, request, reply, caller);
    if (!known) return reply;
    await registry.streamOpened(caller.endpoint.id, known.sessionId);
    reply.raw.on('close', () => {
      // Only the stream this GET opened: a refused second stream (409) leaves the first one open.
      if (reply.raw.statusCode !== 200) return;
      registry.streamClosed(caller.endpoint.id, known.sessionId);
      deps.onStreamClose?.(caller.endpoint.id, known.sessionId);
    });
    const handed = handOver(deps.log, request, reply, caller, known.session);
    deps.onStreamOpen?.(caller.endpoint.id, known.sessionId);
    return handed;
  });

  scope.delete('/mcp', async (request, reply) => {
    const caller = await authenticateMcp(deps.db, request, reply, sessionIdOf(request), deps.credentialReuseMs);
    if (!caller) return reply;
    const sessionId = sessionIdOf(request);
    if (!sessionId) return rpcError(reply, 400, SESSION_REQUIRED, 'Bad Request: Mcp-Session-Id header is required');
    if (!(await registry.close(caller.endpoint, sessionId))) {
      return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
    }
    return reply.status(200).send();
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's MCP sessions: the doorbell writes to their streams through it. */
    mcpSessions: SessionRegistry;
  }
}

/** Registers /mcp on the app and decorates it with the session registry (`app.mcpSessions`). */
export function mcpRoutes(app: FastifyInstance, deps: McpDeps): SessionRegistry {
  const sessions: SessionDeps = { db: deps.db, instanceId: deps.instanceId };
  const todos: TodoDeps = {
    db: deps.db,
    defaultLeaseSeconds: deps.defaultLeaseSeconds,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  };
  const protocol: ProtocolDeps = {
    todos,
    sessions,
    messages: deps.messages,
    version: deps.version,
    log: deps.log,
    ...(deps.hookGuard ? { hookGuard: deps.hookGuard } : {}),
  };
  const registry = new SessionRegistry({
    sessions,
    log: deps.log,
    protocol: (endpoint, sessionId) => buildProtocol(protocol, endpoint, sessionId),
  });
  const forget = (event: BusEvent<'session_closed' | 'endpoint_revoked'>) => {
    const sessionId = event.type === 'session_closed' ? event.session_id : undefined;
    forgetCredentials(event.endpoint_id, sessionId);
    registry
      .forget({ endpointId: event.endpoint_id, sessionId })
      .catch((err: unknown) => deps.log.error({ err }, 'ending the streams of a closed session failed'));
  };
  const unsubscribe = [deps.bus?.subscribe('session_closed', forget), deps.bus?.subscribe('endpoint_revoked', forget)];
  app.addHook('onClose', async () => unsubscribe.forEach((u) => u?.()));
  app.decorate('mcpSessions', registry);
  // Streams stay open until closed: shutdown ends them first, or app.close() would wait on them.
  app.addHook('preClose', () => registry.closeAll());
  void app.register(async (scope) => routes(scope, deps, protocol, registry));
  return registry;
}
