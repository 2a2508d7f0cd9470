-- 0003: the MCP session registry (DESIGN §2, §7). Any instance serves a POST for any
-- live session by looking its id up here, so nothing but a notification stream (a long
-- GET) is sticky to one instance.

-- One row per Mcp-Session-Id the server minted. endpoint_id leads the key like every
-- tenant table (distributable by endpoint); a session of another endpoint is never
-- found, because every lookup names the caller's endpoint. closed_at is set by DELETE
-- (and later by revoke, shutdown and the idle sweep); a closed row answers 404.
CREATE TABLE mcp_sessions (
  endpoint_id     text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id              text NOT NULL,
  client_name     text,
  client_version  text,
  -- The instance that minted the session or, once one is open, holds its stream.
  instance        text NOT NULL,
  -- A notification stream (GET /mcp) is open on `instance`: the doorbell rings these first.
  stream_open     boolean NOT NULL DEFAULT false,
  last_seen_at    timestamptz NOT NULL DEFAULT now(),
  -- Set when a ring was written but never acknowledged (seed 004).
  unheard         boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  closed_at       timestamptz,
  PRIMARY KEY (endpoint_id, id)
);
-- Lookups by session id alone (the operator API's /sessions/{id}), always re-checked for
-- ownership.
CREATE INDEX mcp_sessions_id_idx ON mcp_sessions (id);
