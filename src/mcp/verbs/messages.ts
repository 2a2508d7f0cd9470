// The messages family. Only list_sessions is here: send_message and the session
// message queue (DESIGN §10) come with seed 002's work.

import { z } from 'zod/v4';
import { z as z3 } from 'zod';
import { parseInput } from '../../domain/todo.js';
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
];
