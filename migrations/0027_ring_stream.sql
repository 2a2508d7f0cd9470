-- 0027: which notification stream a todo was last rung to (docs/design/doorbell-acknowledgement.md,
-- "Rings"). Each time a session's stream opens it gets a fresh `stream_id`; the ring
-- statement copies its target's `stream_id` onto the todo in `last_rung_stream`. A session's
-- attach pass then skips a todo rung in the last minute to any stream that is still open —
-- another session's, or this very stream (a ready pass that picked it a moment after it
-- opened) — and rings again a todo rung to a stream that has since dropped, this session's
-- earlier one included. Before this the attach pass read the ring rows, which the ring
-- writer inserts asynchronously after delivery, so a ring made a few milliseconds earlier
-- was not yet visible and the todo was rung twice.
-- Both columns are nullable with no default: adding them rewrites nothing. The attach pass
-- looks a stream up by endpoint and stream id only for todos rung within the minute (work
-- in flight), through the unique index below.
ALTER TABLE mcp_sessions ADD COLUMN stream_id text;
ALTER TABLE todos ADD COLUMN last_rung_stream text;
CREATE UNIQUE INDEX mcp_sessions_stream_idx ON mcp_sessions (endpoint_id, stream_id) WHERE stream_id IS NOT NULL;
