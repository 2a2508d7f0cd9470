-- 0033: whether a session listens for the doorbell. `channel` records that its
-- initialize declared the `claude/channel` experimental capability (the bridge declares
-- it for the client it serves); the doorbell rings only such sessions, the others wait
-- with claim_next and wait_seconds (docs/design/doorbell-acknowledgement.md, "Who is rung").
-- Sessions open when this runs were rung before it, so they keep being rung: the column
-- starts true for them, and every new session states it.

ALTER TABLE mcp_sessions ADD COLUMN channel boolean NOT NULL DEFAULT true;
ALTER TABLE mcp_sessions ALTER COLUMN channel SET DEFAULT false;

DROP FUNCTION open_mcp_session(text, text, text, text, text, integer);

-- As 0021, with the session's channel capability.
CREATE FUNCTION open_mcp_session(
  p_endpoint text, p_id text, p_client_name text, p_client_version text, p_instance text, p_max integer,
  p_channel boolean)
RETURNS TABLE (live_count integer, opened boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('mcp_sessions:' || p_endpoint, 0));
  SELECT count(*)::int INTO n FROM (
    SELECT 1 FROM mcp_sessions s WHERE s.endpoint_id = p_endpoint AND s.closed_at IS NULL LIMIT p_max) l;
  IF n >= p_max THEN
    RETURN QUERY SELECT n, false;
    RETURN;
  END IF;
  INSERT INTO mcp_sessions (endpoint_id, id, client_name, client_version, instance, channel)
  VALUES (p_endpoint, p_id, p_client_name, p_client_version, p_instance, p_channel);
  RETURN QUERY SELECT n + 1, true;
END
$$;
