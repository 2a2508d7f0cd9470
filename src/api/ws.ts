// /ws: the board's WebSocket for the session message queue (docs/design/message-queue.md,
// "Surfaces"). Signed in by the board session cookie (or the synthetic admin with auth
// off); a browser's Origin must be one this server goes by (src/http/hosts.ts). Frames:
// `{id, type: "request", action, payload}` in; `{id, type: "response", action, payload}`
// or `{id, type: "error", action, payload: {code, message, details?}}` out; pushes are
// `{type: "notification", action, payload}`. Every action authorises the named session
// inside its use case, so a foreign, unknown or closed session answers NOT_FOUND "Session
// not found" with nothing mutated or published. `message.queue.subscribe` subscribes the connection to a session: after every
// successful mutation (on any instance) it receives `message.queue.status_changed`.

import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boardCookies } from '../http/auth.js';
import { AppError, invalidArgument, type ErrorCode } from '../domain/errors.js';
import { UNSTORABLE_MESSAGE, unstorableField } from '../domain/unstorable.js';
import { boardSession } from '../identity/board-sessions.js';
import type { IdentityDeps, Principal } from '../identity/principal.js';
import type { Actor, MessageDeps } from '../messages/context.js';
import { StatusHub, type Socket } from './ws-hub.js';
import { BoardSockets } from './ws-sockets.js';
import { WS_ACTIONS } from './ws-actions.js';
import { actorOf } from './message-routes.js';
import { databaseTimeout, DATABASE_UNAVAILABLE, errorBody, isDatabaseUnavailable } from '../http/errors.js';
import { originAllowed } from '../http/hosts.js';
import { RateLimiter, type BucketSpec } from '../http/rate-limit.js';
import type { Bus } from '../domain/events.js';
import type { Tracing } from '../tracing/index.js';

export interface WsDeps extends IdentityDeps {
  messages: MessageDeps;
  syntheticAdmin: Principal | null;
  bus: Bus;
  /** Frames per connection (SWITCHBOARD_WS_RATE / SWITCHBOARD_WS_BURST). */
  socketLimit: BucketSpec;
  /** Open connections per human on this instance (SWITCHBOARD_WS_PER_HUMAN). */
  socketsPerHuman: number;
  /** The whole origins served (config.allowedOrigins): a browser's Origin must be one of them. */
  allowedOrigins: readonly string[];
  tracing: Tracing;
}

/** The slice of a `ws` socket used here (the package ships no types of its own). */
interface WsSocket extends Socket {
  on(event: 'message' | 'close', listener: (data: unknown) => void): void;
  close(code?: number, reason?: string): void;
}

/**
 * The /ws codes for the generic errors (docs/design/message-queue.md, "Error codes");
 * domain codes (queue_full, …) pass as they are.
 */
const WIRE_CODES: Partial<Record<ErrorCode, string>> = {
  not_found: 'NOT_FOUND',
  invalid_argument: 'VALIDATION_ERROR',
  forbidden: 'FORBIDDEN',
  unauthenticated: 'UNAUTHORIZED',
  internal: 'INTERNAL_ERROR',
};

export function wireError(err: unknown): { code: string; message: string; details?: Record<string, unknown> } {
  if (!(err instanceof AppError)) {
    if (isDatabaseUnavailable(err)) return { code: 'unavailable', message: DATABASE_UNAVAILABLE };
    const timedOut = databaseTimeout(err);
    if (timedOut) return { code: 'unavailable', message: timedOut };
    return { code: 'INTERNAL_ERROR', message: 'internal error; the server log has the details' };
  }
  const code = WIRE_CODES[err.code] ?? err.code;
  return err.details ? { code, message: err.message, details: err.details } : { code, message: err.message };
}

/** The board session a connection was opened with: its cookie and expiry (null with auth off). */
interface Opened {
  cookie: string | null;
  expiresAt: Date | null;
}

async function admit(
  deps: WsDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  opened: WeakMap<FastifyRequest, Opened>,
  held: (humanId: string) => number,
): Promise<void> {
  // The same allow-list as /mcp (src/http/hosts.ts): the public URL's origin, the listen
  // origin (each loopback name on a loopback bind), SWITCHBOARD_ALLOWED_HOSTS, or the
  // origin addressed; whole origins, ports included.
  const check = { origins: deps.allowedOrigins, host: request.headers.host, protocol: request.protocol };
  if (!originAllowed(request.headers.origin, check)) {
    await reply.status(403).send(errorBody('forbidden', 'Origin: not this server'));
    return;
  }
  const cookie = deps.syntheticAdmin ? undefined : request.cookies[boardCookies(deps.publicUrl).session];
  const session = deps.syntheticAdmin ? null : await boardSession(deps, cookie);
  const principal = deps.syntheticAdmin ?? session?.principal;
  if (!principal) {
    await reply.status(401).send(errorBody('unauthenticated', 'sign in on the board first'));
    return;
  }
  // A cap per human (docs/design/limits.md, "Slow clients"): a script looping on /ws cannot
  // pile up connections. Concurrent upgrades may pass it together, by their number at most.
  if (held(principal.human.id) >= deps.socketsPerHuman) {
    const message = `too many board connections: at most ${deps.socketsPerHuman} per human (SWITCHBOARD_WS_PER_HUMAN); close a board tab`;
    await reply.status(429).send(errorBody('resource_exhausted', message, { limit: deps.socketsPerHuman }));
    return;
  }
  request.principal = principal;
  opened.set(request, { cookie: cookie ?? null, expiresAt: session?.expires_at ?? null });
}

/** A frame as parsed: a JSON object, its fields not yet checked. */
type Frame = { id?: unknown; type?: unknown; action?: unknown; payload?: unknown };
type Reply = { id: string | number | null; action: string | undefined; type: 'response' | 'error'; payload: unknown };

function onMessage(deps: WsDeps, hub: StatusHub, socket: Socket, actor: Actor) {
  // A limit per connection: one busy tab cannot starve the rest.
  const limiter = new RateLimiter(deps.socketLimit, 1);
  const answer = async (request: Frame): Promise<Reply> => {
    // The id and action are echoed: only as scalars, because echoing a deeply nested value
    // would overflow the stack in JSON.stringify (an unhandled rejection: the process exits).
    const id = typeof request.id === 'string' || typeof request.id === 'number' ? request.id : null;
    const action = typeof request.action === 'string' ? request.action : undefined;
    // Own actions only: a name such as "constructor" must not reach Object.prototype.
    const handler = action !== undefined && Object.hasOwn(WS_ACTIONS, action) ? WS_ACTIONS[action] : undefined;
    try {
      if (request.id !== undefined && request.id !== null && id === null) {
        throw new AppError('invalid_argument', 'id: must be a string or a number', { field: 'id' });
      }
      const wait = limiter.take('socket', Date.now());
      if (wait > 0) {
        throw new AppError('resource_exhausted', `rate limited: retry in ${wait} s`, { retry_after_seconds: wait });
      }
      if (request.type !== undefined && request.type !== 'request') {
        throw new AppError('invalid_argument', 'type: must be "request"', { field: 'type' });
      }
      if (!handler) {
        const named = action === undefined ? 'must be a string naming an action' : `"${action}" is not a known action`;
        throw new AppError('invalid_argument', `action: ${named}`, { field: 'action' });
      }
      const nul = unstorableField(request.payload);
      if (nul !== null) throw invalidArgument(nul || 'payload', UNSTORABLE_MESSAGE);
      const payload = await handler({ messages: deps.messages, actor, hub, socket }, request.payload);
      return { id, action, type: 'response', payload };
    } catch (err) {
      return { id, action, type: 'error', payload: wireError(err) };
    }
  };
  // A span per frame (docs/design/tracing.md, "/ws"), a trace of its own: the connection
  // is long-lived, and its upgrade request's span ended when the socket opened.
  const traced = async (request: Frame): Promise<Reply> => {
    const { tracing } = deps;
    const known = typeof request.action === 'string' && Object.hasOwn(WS_ACTIONS, request.action);
    // Named by the action only when it is one: never by what a client made up.
    const action = known ? String(request.action) : 'unknown';
    const span = tracing.start(`ws ${action}`, {
      kind: 'server',
      root: true,
      attributes: { 'switchboard.ws.action': action },
    });
    try {
      const reply = await tracing.activate(span, () => answer(request));
      const outcome = reply.type === 'error' ? (reply.payload as { code: string }).code : 'ok';
      span.setAttribute('switchboard.outcome', outcome);
      if (reply.type === 'error') span.fail(outcome);
      return reply;
    } finally {
      span.end();
    }
  };
  return async (raw: unknown) => {
    let request: Frame;
    try {
      request = JSON.parse(String(raw)) as Frame;
    } catch {
      socket.send(JSON.stringify({ type: 'error', payload: { code: 'VALIDATION_ERROR', message: 'not JSON' } }));
      return;
    }
    // JSON that is not an object (null, a number, an array) is a frame without fields.
    if (typeof request !== 'object' || request === null || Array.isArray(request)) request = {};
    socket.send(JSON.stringify(await (deps.tracing.enabled ? traced(request) : answer(request))));
  };
}

export function wsRoutes(app: FastifyInstance, deps: WsDeps): void {
  const hub = new StatusHub(deps.messages, deps.bus);
  // Open connections by human and board session: each closes when its session ends, on
  // any instance (docs/design/people.md, "Board connections").
  const sockets = new BoardSockets(
    async (cookie) => (await boardSession(deps, cookie))?.expires_at ?? null,
    deps.bus,
    (err) => app.log.warn({ err }, '/ws: could not re-check a board session'),
  );
  const opened = new WeakMap<FastifyRequest, Opened>();
  app.addHook('onClose', async () => {
    sockets.stop();
    hub.stop();
  });
  void app.register(async (scope) => {
    // The largest action (a reorder of a long queue, a 16 KiB message) is far below 1 MiB.
    await scope.register(websocket, { options: { maxPayload: 1024 * 1024 } });
    scope.get(
      '/ws',
      {
        websocket: true,
        preValidation: (request, reply) => admit(deps, request, reply, opened, (id) => sockets.count(id)),
      },
      (socket: unknown, request) => {
        const ws = socket as WsSocket;
        // The upgrade request's span ends with the upgrade: the connection may last hours.
        request.traceSpan?.setAttribute('http.response.status_code', 101);
        request.traceSpan?.end();
        const principal = request.principal;
        const session = opened.get(request);
        if (!principal || !session) return ws.close(1008, 'unauthenticated');
        const handle = onMessage(deps, hub, ws, actorOf(principal));
        // A failure to answer (the socket gone meanwhile) is logged, never an unhandled rejection.
        ws.on(
          'message',
          (data) => void handle(data).catch((err: unknown) => request.log.error({ err }, '/ws frame failed')),
        );
        const humanId = principal.human.id;
        sockets.add(ws, humanId, session.cookie, session.expiresAt);
        ws.on('close', () => {
          hub.drop(ws);
          sockets.remove(ws, humanId);
        });
      },
    );
  });
}
