-- A state change is counted once per statement, not once per row (docs/design/scale.md,
-- "Exact counts"; docs/design/coalescing.md, "What a batch shares"). The row-level trigger
-- of 0012/0014 appended one todo_count_deltas row, and one index entry, for every todo
-- that changed state: a coalesced claim of 32 todos wrote 32 deltas that say the same
-- thing, "32 of this queue went from pending to claimed". A statement-level trigger sees
-- the statement's rows at once (its transition tables) and appends one delta per
-- (endpoint, queue, from, to): a single claim still writes one, a batch of 32 writes one
-- instead of 32 (measured: ~2 delta rows and their index entries were ~415 of ~2,450 WAL
-- bytes a claim → complete cycle).
--
-- PostgreSQL allows transition tables only on triggers without a column list, so this
-- trigger fires after every UPDATE of todos; an update that changes no counted state
-- (heartbeats, rings) joins its rows and inserts nothing. A todo's queue never changes,
-- so the new row's queue is the old row's.
CREATE FUNCTION todo_counts_update_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO todo_count_deltas
    SELECT d.endpoint_id, d.queue, d.from_state, d.to_state, count(*)
      FROM (SELECT n.endpoint_id, n.queue, todo_counted_state(o.state, o.ready_at) AS from_state,
                   todo_counted_state(n.state, n.ready_at) AS to_state
              FROM changed_old o JOIN changed_new n ON n.endpoint_id = o.endpoint_id AND n.id = o.id
             WHERE NOT n.synthetic) d
     WHERE d.from_state IS DISTINCT FROM d.to_state
     GROUP BY 1, 2, 3, 4;
  RETURN NULL;
END
$$;

DROP TRIGGER todos_count_update ON todos;
DROP FUNCTION todo_counts_update();
CREATE TRIGGER todos_count_update AFTER UPDATE ON todos
  REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION todo_counts_update_rows();
