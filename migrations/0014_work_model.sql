-- 0014: the work model's columns (docs/design/todos.md): priority, not_before and a
-- per-todo retry backoff.
--
-- priority: higher is more urgent; claims take the highest first, oldest ready first
-- within a priority. The ready indexes gain the claim rank as their second key so
-- claim_next still reads one index range in claim order and stops at the first unlocked
-- row. The rank is the priority of a pending todo; every other row in the index (a claim,
-- whose ready_at is its lease's expiry, a failure waiting for its retry) ranks -101, after
-- all pending work. _Why_: such rows mostly lie ahead (ready_at in the future), and inside
-- a priority's range they would sit after its pending rows, so once a priority drained,
-- every claim would step over all of them (and over their dead versions until a vacuum)
-- to reach the next priority. Ranked last, they are where the scan stops. A lapsed claim
-- or a due retry is still claimable, after the pending work; the reaper and the requeue
-- sweep put it back in its priority as pending within their interval.
--
-- not_before: the instant before which nobody may claim or ring the todo. Until a
-- promotion pass reaches it, a scheduled pending todo has ready_at NULL, so it is in none
-- of the claim indexes: a large scheduled backlog costs the claim path nothing.
--
-- retry_base_seconds / retry_max_seconds: the todo's own backoff (NULL: the server's).
-- Adding columns with constant defaults rewrites nothing (PostgreSQL 11+).
ALTER TABLE todos
  ADD COLUMN priority smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
  ADD COLUMN not_before timestamptz,
  ADD COLUMN retry_base_seconds integer CHECK (retry_base_seconds BETWEEN 1 AND 86400),
  ADD COLUMN retry_max_seconds integer CHECK (retry_max_seconds BETWEEN 1 AND 604800),
  ADD CONSTRAINT todos_retry_backoff_order CHECK (retry_max_seconds >= retry_base_seconds);

DROP INDEX todos_ready_queue_idx;
DROP INDEX todos_ready_idx;
CREATE INDEX todos_ready_queue_idx ON todos
  (endpoint_id, queue, (CASE WHEN state = 'pending' THEN priority ELSE -101 END) DESC, ready_at) WHERE ready_at IS NOT NULL;
CREATE INDEX todos_ready_idx ON todos
  (endpoint_id, (CASE WHEN state = 'pending' THEN priority ELSE -101 END) DESC, ready_at) WHERE ready_at IS NOT NULL;

-- Scheduled todos by the instant they become ready: the promotion pass reads the due
-- prefix and nothing else.
CREATE INDEX todos_scheduled_idx ON todos (not_before) WHERE state = 'pending' AND ready_at IS NULL;

-- A scheduled todo (pending, ready_at NULL, not_before ahead) is no ring pass's and no
-- notify hook's business until the promotion pass makes it ready. The ring and hook
-- indexes of 0012 say so in their predicates (store/rings.ts and store/notify-hooks.ts
-- repeat them), so a scheduled backlog costs those passes nothing.
DROP INDEX todos_ring_ready_idx;
DROP INDEX todos_ringable_idx;
DROP INDEX todos_rering_idx;
DROP INDEX todos_hook_undecided_idx;
CREATE INDEX todos_ring_ready_idx ON todos (endpoint_id, queue, created_at)
  WHERE state = 'pending' AND ready_at IS NOT NULL AND ring_attempts < 6 AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook')
    AND (last_ringed_at IS NULL OR last_ringed_at < updated_at);
CREATE INDEX todos_ringable_idx ON todos (endpoint_id, queue, created_at)
  WHERE state = 'pending' AND ready_at IS NOT NULL AND ring_attempts < 6 AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook');
CREATE INDEX todos_rering_idx ON todos (endpoint_id, queue, ring_attempts, created_at)
  WHERE state = 'pending' AND ready_at IS NOT NULL AND ring_attempts BETWEEN 1 AND 4 AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook');
CREATE INDEX todos_hook_undecided_idx ON todos (endpoint_id, queue, updated_at)
  WHERE state = 'pending' AND ready_at IS NOT NULL AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook')
    AND (hook_fired_at IS NULL OR hook_fired_at < updated_at);

-- The oldest ready pending todo of a queue (presence digests, the oldest-age metric, the
-- board's pending lane by age). The ready indexes now lead with priority, so they no
-- longer give that in one probe; this one is partial on pending rows, so a claim moves its
-- row out of it without writing to it and only a move into pending pays an entry.
CREATE INDEX todos_pending_age_idx ON todos (endpoint_id, queue, ready_at) WHERE state = 'pending' AND NOT synthetic;

-- The counters (0012) count a scheduled todo under the state 'scheduled', not 'pending':
-- every reader of the pending count (admission's queue depth, presence, metrics, the
-- board's lanes) then leaves scheduled work out of "ready" without a change. The update
-- trigger also fires when a pending row's ready_at turns from NULL to a value (the
-- promotion), which moves it from 'scheduled' to 'pending'.
CREATE FUNCTION todo_counted_state(p_state text, p_ready_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_state = 'pending' AND p_ready_at IS NULL THEN 'scheduled' ELSE p_state END
$$;

CREATE OR REPLACE FUNCTION todo_counts_update() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  from_state text := todo_counted_state(OLD.state, OLD.ready_at);
  to_state text := todo_counted_state(NEW.state, NEW.ready_at);
BEGIN
  IF from_state IS DISTINCT FROM to_state THEN
    INSERT INTO todo_count_deltas VALUES (NEW.endpoint_id, NEW.queue, from_state, to_state, 1);
  END IF;
  RETURN NULL;
END
$$;
DROP TRIGGER todos_count_update ON todos;
CREATE TRIGGER todos_count_update AFTER UPDATE OF state, ready_at ON todos
  FOR EACH ROW WHEN (NOT NEW.synthetic AND (OLD.state IS DISTINCT FROM NEW.state
    OR (NEW.state = 'pending' AND (OLD.ready_at IS NULL) <> (NEW.ready_at IS NULL))))
  EXECUTE FUNCTION todo_counts_update();

CREATE OR REPLACE FUNCTION todo_counts_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO todo_count_deltas
    SELECT endpoint_id, queue, NULL, todo_counted_state(state, ready_at), count(*) FROM added
     WHERE NOT synthetic GROUP BY 1, 2, 4;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION todo_counts_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO todo_count_deltas
    SELECT g.endpoint_id, g.queue, todo_counted_state(g.state, g.ready_at), NULL, count(*) FROM gone g
     WHERE NOT g.synthetic AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = g.endpoint_id)
     GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
