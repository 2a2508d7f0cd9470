// The messages family (list_sessions, send_message) and the message self verbs
// (next_message, ack_message) of the session message queue
// (docs/design/message-queue.md). send_message queues into a session of this endpoint, or
// of another endpoint with the same owner that accepts agent messages, always as `agent`
// and naming the sender; a message reaches the agent on its stream, or through
// next_message, and stays until ack_message.

import { z } from 'zod';
import { parseInput } from '../../domain/todo.js';
import { ackInput, QUEUED_BY, sendInput } from '../../domain/messages.js';
import { ackMessage, nextMessage, nextMessageInput } from '../../messages/delivery.js';
import { addMessage } from '../../messages/queue.js';
import { listSessions } from '../../sessions/index.js';
import { noArguments, time } from '../../contract/shapes.js';
import type { Verb } from './types.js';
import { READS, SETTLES, WRITES } from './types.js';

const queuedBy = z.enum(QUEUED_BY).describe('Who queued it: a person, an agent, a workflow token or the server.');

export const messageVerbs: Verb[] = [
  {
    name: 'list_sessions',
    annotations: READS,
    description:
      "List this endpoint's live MCP sessions (competing consumers of the same agent), oldest first; " +
      '`current` marks the caller.',
    input: noArguments,
    output: z.object({
      sessions: z.array(
        z.object({
          id: z.string(),
          client_name: z.string().nullable(),
          client_version: z.string().nullable(),
          stream_open: z.boolean(),
          last_seen_at: time,
          created_at: time,
          current: z.boolean(),
        }),
      ),
    }),
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
    annotations: WRITES,
    description:
      "Queue a message into a live MCP session of this endpoint (see list_sessions), or of another of your owner's " +
      'endpoints that accepts agent messages (its owner turns that on; else `forbidden`). It reaches that agent ' +
      "in FIFO order, one at a time, naming this endpoint as the sender. `queue_full` means the session's queue " +
      'is at capacity: retry later.',
    input: sendInput,
    output: z.object({
      message: z.object({
        id: z.string(),
        position: z.number().int().describe('Its place in the session’s queue, 1 first.'),
        content: z.string(),
        queued_by: queuedBy,
        sender_id: z.string().nullable(),
        queued_at: time,
      }),
    }),
    async run(ctx, args) {
      const data = parseInput(sendInput, args);
      const actor = {
        kind: 'agent' as const,
        humanId: ctx.endpoint.human_id,
        endpointId: ctx.endpoint.id,
        endpointSlug: ctx.endpoint.slug,
      };
      const { entry } = await addMessage(ctx.messages, actor, data.session_id, { content: data.content });
      return { message: entry };
    },
  },
  {
    name: 'next_message',
    annotations: WRITES,
    description:
      'Take the next message queued for this session (for clients without a notification stream). Answers ' +
      '{"empty": true} when none is waiting or one is still unacknowledged; pass wait_seconds to wait for one. ' +
      'Acknowledge it with ack_message.',
    input: nextMessageInput,
    output: z.union([
      z.object({
        message: z.object({
          message_id: z.string(),
          queued_by: queuedBy,
          queued_at: time,
          content: z.string(),
          delivery_attempt: z.number().int().describe('1 on the first delivery, more when it is delivered again.'),
          from_endpoint: z.string().optional().describe('The sending endpoint’s slug, when an agent queued it.'),
          from_endpoint_id: z.string().optional().describe('The sending endpoint’s id, when an agent queued it.'),
        }),
      }),
      z.object({ empty: z.literal(true) }),
    ]),
    run: (ctx, args) =>
      nextMessage(ctx.messages, { endpointId: ctx.endpoint.id, sessionId: ctx.sessionId }, args, {
        waiters: ctx.waiters,
        signal: ctx.signal,
      }),
  },
  {
    name: 'ack_message',
    annotations: SETTLES,
    description:
      'Acknowledge a message delivered to this session (by its message_id): it is deleted and the next one ' +
      'follows. An unacknowledged message is delivered again after the ack timeout.',
    input: ackInput,
    output: z.object({ acknowledged: z.literal(true), message_id: z.string() }),
    run: (ctx, args) => ackMessage(ctx.messages, { endpointId: ctx.endpoint.id, sessionId: ctx.sessionId }, args),
  },
];
