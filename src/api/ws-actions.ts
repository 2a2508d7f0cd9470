// The /ws actions of the session message queue. Each names its session in the payload
// and passes the rest to the use case, which authorises the session first; the payload
// is strict, so a client field such as `queued_by` is a validation error.

import { invalidArgument } from '../domain/errors.js';
import type { Actor, MessageDeps } from '../messages/context.js';
import { authorise } from '../messages/context.js';
import {
  addMessage,
  clearMessages,
  editMessage,
  queueStatus,
  removeMessage,
  reorderMessages,
  statusOf,
} from '../messages/queue.js';
import type { Socket, StatusHub } from './ws-hub.js';

export interface ActionContext {
  messages: MessageDeps;
  actor: Actor;
  hub: StatusHub;
  socket: Socket;
}

type Action = (ctx: ActionContext, payload: unknown) => Promise<object>;

/** The payload's session_id and the rest of its fields. */
function split(payload: unknown): { sessionId: string; rest: Record<string, unknown> } {
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
    throw invalidArgument('payload', 'must be an object with a session_id');
  }
  const { session_id: sessionId, ...rest } = payload as Record<string, unknown>;
  if (typeof sessionId !== 'string' || sessionId === '') throw invalidArgument('session_id', 'is required');
  return { sessionId, rest };
}

function noMore(rest: Record<string, unknown>): void {
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw invalidArgument(extra, 'is not a known field');
}

export const WS_ACTIONS: Record<string, Action> = {
  'message.queue.add': async (ctx, payload) => {
    const { sessionId, rest } = split(payload);
    return (await addMessage(ctx.messages, ctx.actor, sessionId, rest)).entry;
  },
  'message.queue.update': async (ctx, payload) => {
    const { sessionId, rest } = split(payload);
    return (await editMessage(ctx.messages, ctx.actor, sessionId, rest)).entry;
  },
  'message.queue.remove': async (ctx, payload) => {
    const { sessionId, rest } = split(payload);
    return removeMessage(ctx.messages, ctx.actor, sessionId, rest);
  },
  'message.queue.cancel': async (ctx, payload) => {
    const { sessionId, rest } = split(payload);
    noMore(rest);
    const { removed } = await clearMessages(ctx.messages, ctx.actor, sessionId);
    return { removed };
  },
  'message.queue.reorder': async (ctx, payload) => {
    const { sessionId, rest } = split(payload);
    return reorderMessages(ctx.messages, ctx.actor, sessionId, rest);
  },
  'message.queue.get': async (ctx, payload) => {
    const { sessionId, rest } = split(payload);
    noMore(rest);
    return queueStatus(ctx.messages, ctx.actor, sessionId);
  },
  /** Subscribes this socket to the session's status_changed notices; answers the status now. */
  'message.queue.subscribe': async (ctx, payload) => {
    const { sessionId, rest } = split(payload);
    noMore(rest);
    const ref = await authorise(ctx.messages, ctx.actor, sessionId);
    ctx.hub.subscribe(ctx.socket, ref);
    return statusOf(ctx.messages, ref);
  },
};
