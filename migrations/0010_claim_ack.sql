-- 0010: the claim's ring acknowledgement (seed 004) as a function the claim statement
-- calls only when there is something to acknowledge. As CTEs of every claim statement it
-- planned, opened and locked doorbell_rings and mcp_sessions on each claim, rung or not
-- (~0.25 ms of PostgreSQL CPU a statement, bench/README.md); the claim now probes the
-- open-rings index twice (the todo's rings, the endpoint's digests) and calls this only
-- on a hit. Late rings (already unheard) still record acked_at and ack_via but come back
-- with in_window = false. Acknowledging clears the unheard mark of the rings' sessions.

CREATE FUNCTION ack_rings_of_claim(p_endpoint text, p_todo text, p_session text)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  answer jsonb;
BEGIN
  WITH acked AS (
    UPDATE doorbell_rings SET acked_at = now(), ack_via = 'claim', acked_session_id = p_session
     WHERE endpoint_id = p_endpoint AND acked_at IS NULL
       AND (todo_id = p_todo OR (kind = 'digest' AND sent_at <= now()))
    RETURNING kind, synthetic, session_id, (unheard_at IS NULL) AS in_window),
  cleared AS (
    UPDATE mcp_sessions s SET unheard = false
     WHERE s.endpoint_id = p_endpoint AND s.unheard AND s.id IN (SELECT session_id FROM acked))
  SELECT jsonb_agg(jsonb_build_object('kind', kind, 'synthetic', synthetic, 'in_window', in_window))
    INTO answer FROM acked;
  RETURN answer;
END
$$;
