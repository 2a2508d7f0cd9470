-- 0016: the idempotency window (docs/design/todos.md, "Idempotent create").
--
-- A create's idempotency_key deduplicates against the live todo holding it (the unique
-- todos_idempotency_key of 0001, which still settles two concurrent inserts) and against
-- terminal todos changed within SWITCHBOARD_IDEMPOTENCY_WINDOW. Several terminal todos
-- may share a key, so this index is not unique; the lookup reads the key's rows and
-- filters them by state and age (a key has a handful of rows, never a backlog).
--
-- Only keyed rows are indexed, and neither column ever changes after the insert, so the
-- index costs keyless creates nothing and never turns a settle into a non-HOT update.
CREATE INDEX todos_idempotency_recent_idx ON todos (endpoint_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
