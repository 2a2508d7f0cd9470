-- 0021: opening an MCP session under its endpoint's live-session cap
-- (SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT; docs/design/mcp-surface.md, "Limits") in one
-- round trip. The function takes a transaction-scoped advisory lock on the endpoint, so
-- opens of one endpoint on every instance count one after another; being VOLATILE, each
-- statement after the lock sees what the previous holder committed, so the count is
-- exact. The count reads mcp_sessions_live_idx and stops at the cap. A lock rather than
-- the endpoint row: authenticated requests stamp that row and must not wait on this.

CREATE FUNCTION open_mcp_session(
  p_endpoint text, p_id text, p_client_name text, p_client_version text, p_instance text, p_max integer)
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
  INSERT INTO mcp_sessions (endpoint_id, id, client_name, client_version, instance)
  VALUES (p_endpoint, p_id, p_client_name, p_client_version, p_instance);
  RETURN QUERY SELECT n + 1, true;
END
$$;
