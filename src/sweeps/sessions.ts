// Idle MCP sessions: a session with no open stream and no request for 30 minutes is
// closed, so the registry does not keep every client that ever connected. Closing one
// releases its claims at once (store/sessions.ts), so its work is rung to another session.

import type { Pool } from '../db/pool.js';
import { closeIdleSessions } from '../store/sessions.js';
import type { Sweep } from './runner.js';

/** Half an hour: longer than any pause between an agent's tool calls within one task. */
export const SESSION_IDLE_SECONDS = 30 * 60;

export function idleSessionSweep(db: Pool, intervalMs = 60_000, idleSeconds = SESSION_IDLE_SECONDS): Sweep {
  return {
    name: 'idle_sessions',
    intervalMs,
    async run() {
      return closeIdleSessions(db, idleSeconds, 1000);
    },
  };
}
