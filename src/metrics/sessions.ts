// MCP session series (docs/design/mcp-surface.md, "Limits" and "Ending a session"): the
// sessions an initialize at the cap evicted, and the sessions the idle sweep closed early
// because they had no stream. Counted after the statement that closed them committed.
// `metrics.sessions`, built once by the Metrics constructor.

import type { Counter, Registry } from 'prom-client';
import { counter } from './define.js';

export interface SessionCounters {
  evicted: Counter;
  streamlessClosed: Counter;
}

export function sessionCounters(registry: Registry): SessionCounters {
  return {
    evicted: counter(
      registry,
      'switchboard_mcp_sessions_evicted_total',
      'MCP sessions closed by an initialize at the live-session cap (idle: no stream, wait or claim).',
    ),
    streamlessClosed: counter(
      registry,
      'switchboard_mcp_sessions_streamless_closed_total',
      'MCP sessions with no stream and no claim closed after SWITCHBOARD_MCP_STREAMLESS_IDLE, before the 30-minute idle close.',
    ),
  };
}
