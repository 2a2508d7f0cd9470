// The messages family (list_sessions, send_message) and the message self verbs
// (next_message, ack_message) of the session message queue
// (docs/design/message-queue.md). send_message queues into a session of any endpoint with
// the same owner, always as `agent`; a message reaches the agent on its stream, or
// through next_message, and stays until ack_message.

import { z } from 'zod/v4';
import { z as z3 } from 'zod';
import { parseInput } from '../../domain/todo.js';
import { CONTENT_BYTES, sendInput } from '../../domain/messages.js';
import { ackMessage, nextMessage } from '../../messages/delivery.js';
import { addMessage } from '../../messages/queue.js';
import { listSessions } from '../../sessions/index.js';
import type { Verb } from './types.js';

const noArguments = z3.object({}).strict();

export const messageVerbs: Verb[] = [
  {
    name: 'list_sessions',
    description:
      "List this endpoint's live MCP sessions (competing consumers of the same agent), oldest first; " +
      '`current` marks the caller.',
    input: z.strictObject({}),
    async run(ctx, args) {
      parseInput(noArguments, args);
      const sessions = await listSessions(ctx.sessions, ctx.endpoint.id);
      return {
        sessions: sessions.map((s) => ({
          id: s.id,
          client_name: s.client_name,
          client_version: s.client_version,
          stream_open: s.stream_open,
          last_seen_at: s.last_seen_at,
          created_at: s.created_at,
          current: s.id === ctx.sessionId,
        })),
      };
    },
  },
  {
    name: 'send_message',
    description:
      'Queue a message into a live MCP session of one of your owner’s endpoints (see list_sessions for this ' +
      "endpoint's own). It reaches that agent in FIFO order, one at a time. `queue_full` means the session's " +
      'queue is at capacity: retry later.',
    input: z.strictObject({
      session_id: z.string().describe('The target session id, `ms_…`.'),
      content: z.string().describe(`The message text, at most ${CONTENT_BYTES} bytes.`),
    }),
    async run(ctx, args) {
      const data = parseInput(sendInput, args);
      const actor = { kind: 'agent' as const, humanId: ctx.endpoint.human_id, endpointId: ctx.endpoint.id };
      const { entry } = await addMessage(ctx.messages, actor, data.session_id, { content: data.content });
      return { message: entry };
    },
  },
  {
    name: 'next_message',
    description:
      'Take the next message queued for this session (for clients without a notification stream). Answers ' +
      '{"empty": true} when none is waiting or one is still unacknowledged. Acknowledge it with ack_message.',
    input: z.strictObject({}),
    async run(ctx, args) {
      parseInput(noArguments, args);
      return nextMessage(ctx.messages, { endpointId: ctx.endpoint.id, sessionId: ctx.sessionId });
    },
  },
  {
    name: 'ack_message',
    description:
      'Acknowledge a message delivered to this session (by its message_id): it is deleted and the next one ' +
      'follows. An unacknowledged message is delivered again after the ack timeout.',
    input: z.strictObject({ message_id: z.string().describe('The `message_id` from the message’s meta.') }),
    run: (ctx, args) => ackMessage(ctx.messages, { endpointId: ctx.endpoint.id, sessionId: ctx.sessionId }, args),
  },
];
