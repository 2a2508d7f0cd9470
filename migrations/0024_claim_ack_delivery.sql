-- 0024: the claim's ring acknowledgement (0010, 0012) also answers, for each of the rung
-- todo's own rings it acknowledges, how long the ring had been out: acked_at - sent_at, in
-- seconds (held at 0 or above as a guard: sent_at is the inserting statement's now() less
-- the age the writer measured, not an instant this statement read). The claim path observes it into
-- switchboard_doorbell_delivery_seconds (docs/metrics.md, "Latency") from the answer it
-- already reads: no statement is added to a claim, and a claim of a todo nobody rang still
-- costs the two index probes of 0010 and no call of this function. Digest rings answer
-- no figure (a digest names no todo, so no claim "takes" it). Otherwise as in 0012.
CREATE OR REPLACE FUNCTION ack_rings_of_claim(p_endpoint text, p_todo text, p_session text)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  answer jsonb;
BEGIN
  WITH own AS (
    UPDATE doorbell_rings SET acked_at = now(), ack_via = 'claim', acked_session_id = p_session
     WHERE endpoint_id = p_endpoint AND todo_id = p_todo AND acked_at IS NULL
    RETURNING kind, synthetic, session_id, (unheard_at IS NULL) AS in_window,
      greatest(extract(epoch FROM now() - sent_at), 0)::float8 AS delivery_seconds),
  digests AS (
    UPDATE doorbell_rings SET acked_at = now(), ack_via = 'claim', acked_session_id = p_session
     WHERE endpoint_id = p_endpoint AND todo_id IS NULL AND acked_at IS NULL AND kind = 'digest' AND sent_at <= now()
    RETURNING kind, synthetic, session_id, (unheard_at IS NULL) AS in_window, NULL::float8 AS delivery_seconds),
  acked AS (SELECT * FROM own UNION ALL SELECT * FROM digests),
  cleared AS (
    UPDATE mcp_sessions s SET unheard = false
     WHERE s.endpoint_id = p_endpoint AND s.unheard AND s.id IN (SELECT session_id FROM acked))
  SELECT jsonb_agg(jsonb_build_object('kind', kind, 'synthetic', synthetic, 'in_window', in_window,
                                      'delivery_seconds', delivery_seconds))
    INTO answer FROM acked;
  RETURN answer;
END
$$;
