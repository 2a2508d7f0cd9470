// Idle MCP sessions (docs/design/mcp-surface.md, "Ending a session"): a session with no
// open stream closes after SWITCHBOARD_MCP_STREAMLESS_IDLE (5 min) without a request, or
// after 30 minutes when it holds a claim (its agent may still settle it) or a wait is in
// progress; a session with an open stream is never closed here. So the registry does not
// keep every client that ever connected. Closing one releases its claims at once
// (store/sessions.ts), so its work is rung to another session.

import type { Pool } from '../db/pool.js';
import type { SessionCounters } from '../metrics/sessions.js';
import { closeIdleSessions } from '../store/sessions.js';
import type { Sweep } from './runner.js';

/** Half an hour: longer than any pause between an agent's tool calls within one task. */
export const SESSION_IDLE_SECONDS = 30 * 60;

/** SWITCHBOARD_MCP_STREAMLESS_IDLE's default in seconds (src/config/schema.ts says why). */
export const STREAMLESS_IDLE_SECONDS = 5 * 60;

export interface IdleSessionOptions {
  intervalMs?: number;
  idleSeconds?: number;
  /** SWITCHBOARD_MCP_STREAMLESS_IDLE, in seconds. */
  streamlessSeconds?: number;
  metrics?: Pick<SessionCounters, 'streamlessClosed'>;
}

export function idleSessionSweep(db: Pool, options: IdleSessionOptions = {}): Sweep {
  const idleSeconds = options.idleSeconds ?? SESSION_IDLE_SECONDS;
  const streamlessSeconds = options.streamlessSeconds ?? STREAMLESS_IDLE_SECONDS;
  return {
    name: 'idle_sessions',
    intervalMs: options.intervalMs ?? 60_000,
    async run() {
      const closed = await closeIdleSessions(db, { idleSeconds, streamlessSeconds, limit: 1000 });
      options.metrics?.streamlessClosed.inc(closed.early);
      return { ...closed };
    },
  };
}
