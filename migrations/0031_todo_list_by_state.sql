-- 0031: the todo list filtered to failed or canceled todos (the board's state filter, the
-- list route, `switchboard todo list --state`) reads its page off this index, newest
-- first. Without it such a filter, which matches neither partial index of failed rows
-- alone (dead letters vs. retries waiting), planned a sequential scan of todos: 384 ms
-- at a million rows (docs/design/scale.md, "The todo list"). It holds only failed and
-- canceled rows, so the claim → complete path writes nothing more; claimed todos have
-- todos_claimed_idx (in flight: a sort of few), pending and done walk the primary key.
CREATE INDEX todos_failed_canceled_idx ON todos (endpoint_id, id)
  WHERE state IN ('failed', 'canceled') AND NOT synthetic;
