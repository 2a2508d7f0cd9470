// /ws: the board's WebSocket for the session message queue (docs/design/message-queue.md,
// "Surfaces"). Signed in by the board session cookie (or the synthetic admin with auth
// off); a browser's Origin must be this server's. Frames: `{id, type: "request", action,
// payload}` in; `{id, type: "response", action, payload}` or `{id, type: "error", action,
// payload: {code, message, details?}}` out; pushes are `{type: "notification", action,
// payload}`. Every action authorises the named session inside its use case, so a foreign,
// unknown or closed session answers NOT_FOUND "Session not found" with nothing mutated or
// published. `message.queue.subscribe` subscribes the connection to a session: after every
// successful mutation (on any instance) it receives `message.queue.status_changed`.

import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../http/auth.js';
import { AppError, invalidArgument, type ErrorCode } from '../domain/errors.js';
import { nulField } from '../domain/nul.js';
import { boardSession } from '../identity/board-sessions.js';
import type { IdentityDeps, Principal } from '../identity/principal.js';
import type { Actor, MessageDeps } from '../messages/context.js';
import { StatusHub, type Socket } from './ws-hub.js';
import { WS_ACTIONS } from './ws-actions.js';
import { actorOf } from './message-routes.js';
import { DATABASE_UNAVAILABLE, errorBody, isDatabaseUnavailable } from '../http/errors.js';
import { LIMITS, RateLimiter } from '../http/rate-limit.js';
import type { Bus } from '../domain/events.js';

export interface WsDeps extends IdentityDeps {
  messages: MessageDeps;
  syntheticAdmin: Principal | null;
  bus: Bus;
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
    return { code: 'INTERNAL_ERROR', message: 'internal error; the server log has the details' };
  }
  const code = WIRE_CODES[err.code] ?? err.code;
  return err.details ? { code, message: err.message, details: err.details } : { code, message: err.message };
}

/** Same-origin only: the public URL's origin or the one this request was addressed to. */
function originAllowed(request: FastifyRequest, publicUrl: string): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  const allowed = [new URL(publicUrl).origin, `${request.protocol}://${request.headers.host ?? ''}`];
  return allowed.includes(origin);
}

async function admit(deps: WsDeps, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!originAllowed(request, deps.publicUrl)) {
    await reply.status(403).send(errorBody('forbidden', 'Origin: not this server'));
    return;
  }
  const principal = deps.syntheticAdmin ?? (await boardSession(deps, request.cookies[SESSION_COOKIE]))?.principal;
  if (!principal) {
    await reply.status(401).send(errorBody('unauthenticated', 'sign in on the board first'));
    return;
  }
  request.principal = principal;
}

function onMessage(deps: WsDeps, hub: StatusHub, socket: Socket, actor: Actor) {
  // The API's per-credential limit, per connection: one busy tab cannot starve the rest.
  const limiter = new RateLimiter(LIMITS.perCredential, 1);
  return async (raw: unknown) => {
    let request: { id?: unknown; type?: unknown; action?: unknown; payload?: unknown };
    try {
      request = JSON.parse(String(raw)) as typeof request;
    } catch {
      socket.send(JSON.stringify({ type: 'error', payload: { code: 'VALIDATION_ERROR', message: 'not JSON' } }));
      return;
    }
    // JSON that is not an object (null, a number, an array) is a frame without fields.
    if (typeof request !== 'object' || request === null || Array.isArray(request)) request = {};
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
      const nul = nulField(request.payload);
      if (nul !== null) throw invalidArgument(nul || 'payload', 'must not contain NUL characters');
      const payload = await handler({ messages: deps.messages, actor, hub, socket }, request.payload);
      socket.send(JSON.stringify({ id, action, type: 'response', payload }));
    } catch (err) {
      socket.send(JSON.stringify({ id, action, type: 'error', payload: wireError(err) }));
    }
  };
}

export function wsRoutes(app: FastifyInstance, deps: WsDeps): void {
  const hub = new StatusHub(deps.messages, deps.bus);
  app.addHook('onClose', async () => hub.stop());
  void app.register(async (scope) => {
    // The largest action (a reorder of a long queue, a 16 KiB message) is far below 1 MiB.
    await scope.register(websocket, { options: { maxPayload: 1024 * 1024 } });
    scope.get(
      '/ws',
      { websocket: true, preValidation: (request, reply) => admit(deps, request, reply) },
      (socket: unknown, request) => {
        const ws = socket as WsSocket;
        const principal = request.principal;
        if (!principal) return ws.close(1008, 'unauthenticated');
        const handle = onMessage(deps, hub, ws, actorOf(principal));
        // A failure to answer (the socket gone meanwhile) is logged, never an unhandled rejection.
        ws.on(
          'message',
          (data) => void handle(data).catch((err: unknown) => request.log.error({ err }, '/ws frame failed')),
        );
        ws.on('close', () => hub.drop(ws));
      },
    );
  });
}
