-- 0034: sessions that do not pile up (docs/design/mcp-surface.md, "Limits" and "Ending a
-- session"). A client that never sends DELETE (a one-shot CLI) leaves a session per run;
-- an initialize at the cap now closes the endpoint's idle session instead of refusing,
-- and the idle sweep closes a session with no stream after a few idle minutes.
--
-- waiting_until: a long-poll (claim_next / next_message with wait_seconds) waits in the
-- memory of the instance serving it (src/todos/waiters.ts), where no other instance can
-- see it. When a call starts to wait, that instance stamps its session with the wait's
-- deadline, once: a session whose waiting_until is still ahead is waiting. Nothing clears
-- it: a wait that ends early leaves the session counted busy for at most the rest of its
-- deadline (≤ 60 s), which costs nothing but an eviction postponed, while a clearing
-- write would double the writes of every waiting call. A plain call writes nothing. The
-- column is in no index, so the stamp is a HOT update of the session row.

ALTER TABLE mcp_sessions ADD COLUMN waiting_until timestamptz;

-- The idle sweep reads sessions with no stream by how long they have been idle, through
-- this index: the candidates past the cutoff, not every live session (through
-- mcp_sessions_live_idx it would read them all each minute) nor the closed rows
-- retention keeps. Its price: the once-a-minute last_seen_at stamp of a session in use
-- is no longer a HOT update (one index entry more per minute per active session).
CREATE INDEX mcp_sessions_idle_idx ON mcp_sessions (last_seen_at) WHERE closed_at IS NULL AND NOT stream_open;

DROP FUNCTION open_mcp_session(text, text, text, text, text, integer, boolean);

-- As 0033, except at the cap: the endpoint's live session that is idle longest and busy
-- with nothing — no open stream, no wait in progress (waiting_until), no claimed todo
-- (todos_claimed_idx: the endpoint's claims in flight) — is closed in the same
-- statement, and the new one takes its slot. `evicted` names it, so the caller can tell
-- every instance (session_closed) after commit. Only when every live session is busy is
-- the open refused. Under the endpoint's advisory lock, like the count: concurrent opens
-- evict one after another, never the same session twice, and the count stays exact. The
-- candidate is locked SKIP LOCKED and its business re-checked on the locked row, so a
-- wait stamped or a stream opened concurrently is either seen or wins the row.
-- Closing here is the close every path makes: closed_at (the message-queue purge trigger
-- of 0007 fires on it), stream_open cleared; the session holds no claim to release.
CREATE FUNCTION open_mcp_session(
  p_endpoint text, p_id text, p_client_name text, p_client_version text, p_instance text, p_max integer,
  p_channel boolean)
RETURNS TABLE (live_count integer, opened boolean, evicted text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer;
  victim text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('mcp_sessions:' || p_endpoint, 0));
  SELECT count(*)::int INTO n FROM (
    SELECT 1 FROM mcp_sessions s WHERE s.endpoint_id = p_endpoint AND s.closed_at IS NULL LIMIT p_max) l;
  IF n >= p_max THEN
    UPDATE mcp_sessions s SET closed_at = now(), stream_open = false
     WHERE s.endpoint_id = p_endpoint AND s.closed_at IS NULL AND NOT s.stream_open
       AND (s.waiting_until IS NULL OR s.waiting_until <= now())
       AND s.id = (
         SELECT c.id FROM mcp_sessions c
          WHERE c.endpoint_id = p_endpoint AND c.closed_at IS NULL AND NOT c.stream_open
            AND (c.waiting_until IS NULL OR c.waiting_until <= now())
            AND NOT EXISTS (
              SELECT 1 FROM todos t
               WHERE t.endpoint_id = p_endpoint AND t.state = 'claimed' AND t.owner_session_id = c.id)
          ORDER BY c.last_seen_at, c.created_at, c.id
          LIMIT 1 FOR UPDATE OF c SKIP LOCKED)
    RETURNING s.id INTO victim;
    IF victim IS NULL THEN
      RETURN QUERY SELECT n, false, NULL::text;
      RETURN;
    END IF;
    n := n - 1;
  END IF;
  INSERT INTO mcp_sessions (endpoint_id, id, client_name, client_version, instance, channel)
  VALUES (p_endpoint, p_id, p_client_name, p_client_version, p_instance, p_channel);
  RETURN QUERY SELECT n + 1, true, victim;
END
$$;
