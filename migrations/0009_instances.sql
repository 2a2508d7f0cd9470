-- 0009: instance liveness. Every `serve` process upserts its row every heartbeat
-- interval; a row whose beat is older than the dead-after threshold names a process that
-- died without a clean shutdown (kill -9, lost host). The dead-instance sweep deletes
-- such a row, marks the streams that row's instance held as closed (so rings, rotation
-- and presence stop counting them) and rings again whatever it was forwarded and lost.
-- A clean shutdown deletes its own row. A process that was only slow and finds its row
-- gone re-inserts it and marks its open streams open again.
CREATE TABLE instances (
  id            text PRIMARY KEY,            -- SWITCHBOARD_INSTANCE_ID, as in mcp_sessions.instance
  host          text NOT NULL,
  pid           integer NOT NULL,
  version       text NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  last_beat_at  timestamptz NOT NULL DEFAULT now()
);

-- The instance a todo's latest ring was handed to (written or forwarded). Not indexed, so
-- a ring stays a HOT update; read only when an instance is found dead, to ring again the
-- todos whose ring went to it and may never have been written.
ALTER TABLE todos ADD COLUMN last_rung_instance text;
