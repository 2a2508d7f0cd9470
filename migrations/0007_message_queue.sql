-- 0007: the per-session message queue (DESIGN §10, seed 002) and the install-wide
-- settings store its capacity lives in.
--
-- A message row is pending until the delivery reserves it (reserved_in_flight), and is
-- deleted by its acknowledgement, by a human's remove / Clear all while still pending, or
-- by the privileged purge when its session ends. A reservation that is not acknowledged
-- returns the same row to pending: its id, position, queued_at and queued_by never change.

CREATE TABLE queued_messages (
  endpoint_id         text NOT NULL,
  id                  uuid NOT NULL,
  session_id          text NOT NULL,
  -- FIFO order within the session; reorder permutes the visible rows' positions.
  position            bigint NOT NULL,
  content             text NOT NULL CHECK (octet_length(content) BETWEEN 1 AND 16384),
  -- Immutable provenance, derived from the authenticated caller, never from a client field.
  queued_by           text NOT NULL CHECK (queued_by IN ('user', 'agent', 'workflow', 'server')),
  -- The human, endpoint or workflow token that queued it; null for the server's own notices.
  sender_id           text,
  queued_at           timestamptz NOT NULL DEFAULT now(),
  metadata            jsonb NOT NULL DEFAULT '{}',
  -- The seed's lifecycle_reserved_in_flight: hidden from status, not removable, not clearable.
  reserved_in_flight  boolean NOT NULL DEFAULT false,
  reserved_at         timestamptz,
  delivery_attempts   integer NOT NULL DEFAULT 0,
  -- The session's queue generation when the row was accepted.
  generation          bigint NOT NULL,
  PRIMARY KEY (endpoint_id, id),
  FOREIGN KEY (endpoint_id, session_id) REFERENCES mcp_sessions (endpoint_id, id) ON DELETE CASCADE,
  CHECK (reserved_in_flight = (reserved_at IS NOT NULL)),
  CHECK ((queued_by = 'server') = (sender_id IS NULL))
);
CREATE INDEX queued_messages_session_idx ON queued_messages (endpoint_id, session_id, position);
-- The ack-timeout sweep: reservations by age.
CREATE INDEX queued_messages_reserved_idx ON queued_messages (reserved_at) WHERE reserved_in_flight;

-- One row per session with a queue: remove, clear, reserve and the purge take it
-- FOR UPDATE, so they serialise per session on any number of instances. generation
-- advances on every purge, so a delivery retry from before the purge is discarded.
CREATE TABLE queue_session_locks (
  endpoint_id  text NOT NULL,
  session_id   text NOT NULL,
  generation   bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (endpoint_id, session_id),
  FOREIGN KEY (endpoint_id, session_id) REFERENCES mcp_sessions (endpoint_id, id) ON DELETE CASCADE
);

-- The privileged purge: whatever ends a session (DELETE /mcp, idle expiry, revoke, any
-- later path) removes its whole queue, reserved rows included, and advances the
-- generation, in the very transaction that closes it.
CREATE FUNCTION purge_session_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_session_locks AS l (endpoint_id, session_id, generation)
  VALUES (NEW.endpoint_id, NEW.id, 1)
  ON CONFLICT (endpoint_id, session_id) DO UPDATE SET generation = l.generation + 1;
  DELETE FROM queued_messages WHERE endpoint_id = NEW.endpoint_id AND session_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER mcp_sessions_purge_queue AFTER UPDATE OF closed_at ON mcp_sessions
  FOR EACH ROW WHEN (OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL)
  EXECUTE FUNCTION purge_session_queue();

-- Install-wide settings, one JSON value per key. version increases with every write, so
-- an instance applying writes it hears about never goes back to an older one.
CREATE TABLE settings (
  key         text PRIMARY KEY,
  value       jsonb NOT NULL,
  version     bigint NOT NULL DEFAULT 1,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
