-- 0035: whether a session's last ring is still unanswered, so the doorbell rings an idle
-- agent once rather than once per todo (docs/design/doorbell-acknowledgement.md, "Who is
-- rung"). A ring statement stamps the session with the todo it rang and that todo's claim
-- count; the ring is answered once the todo is claimed (its count moves) or leaves
-- pending, once the session settles a claim it took after the ring, or by ack_doorbell,
-- and it lapses with the ack window. Read by primary key from the session row the ring
-- statement already reads: no index.

ALTER TABLE mcp_sessions ADD COLUMN ring_todo_id text;
ALTER TABLE mcp_sessions ADD COLUMN ring_claims integer;
