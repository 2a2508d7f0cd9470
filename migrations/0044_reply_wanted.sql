-- 0044: the hand-off reply trigger fires only for todos whose sender asked for a reply
-- (docs/design/handoff.md, "Reply").
--
-- 0040's trigger ran PL/pgSQL and probed todo_links on the end of every todo, asked or
-- not. 30,000 single-row UPDATEs to done took 0.7–1.3 s longer with it enabled than
-- disabled (two runs, one in each order, 2026-12-06, load 1–8; the order alone moves such
-- a loop by as much, so this is an indication, not a figure). The flag is set with the
-- link, in the hand-off's transaction, so the WHEN clause decides without calling out.
ALTER TABLE todos ADD COLUMN reply_wanted boolean NOT NULL DEFAULT false;

UPDATE todos t SET reply_wanted = true
  FROM todo_links l
 WHERE l.reply AND t.endpoint_id = l.child_endpoint_id AND t.id = l.child_id;

DROP TRIGGER todos_handoff_reply ON todos;
CREATE TRIGGER todos_handoff_reply AFTER UPDATE OF state, next_retry_at ON todos
  FOR EACH ROW WHEN (
    NEW.reply_wanted
    AND (NEW.state IN ('done', 'canceled') OR (NEW.state = 'failed' AND NEW.next_retry_at IS NULL))
    AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.next_retry_at IS DISTINCT FROM NEW.next_retry_at)
    AND NOT NEW.synthetic)
  EXECUTE FUNCTION todo_handoff_reply();
