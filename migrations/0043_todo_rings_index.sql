-- 0043: a todo's doorbell rings, newest first, for its drawer's rings and timeline
-- (docs/design/ask-human.md, "History"; listTodoRings in src/store/todo-rings.ts).
--
-- The only index on (endpoint_id, todo_id) was idx_rings_open_todo, partial on unacked
-- rings: a todo's heard rings were found by walking the endpoint's whole ring history
-- (300,000 rings over five endpoints: a sequential scan of 4,000 buffers, 35 ms). Keyed
-- in the order the read sorts, it reads the rows it answers (4 buffers). A ring row is
-- written once and updated once or twice (ack, unheard), at most six per todo.
CREATE INDEX idx_rings_todo ON doorbell_rings (endpoint_id, todo_id, sent_at DESC, id DESC)
  WHERE todo_id IS NOT NULL;
