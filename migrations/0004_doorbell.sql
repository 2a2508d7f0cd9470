-- 0004: what the doorbell needs. Sessions remember when they were last rung, so rings
-- rotate across an endpoint's open streams; pending todos are found by age for the
-- heartbeat re-ring without scanning the whole table.

ALTER TABLE mcp_sessions ADD COLUMN last_rung_at timestamptz;

-- ring_attempts and last_ringed_at are not indexed on purpose: a ring then stays a HOT
-- update of the todo row.
CREATE INDEX todos_pending_age_idx ON todos (created_at) WHERE state = 'pending';
