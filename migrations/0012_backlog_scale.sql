-- 0012: every pass costs what it touches, not what is waiting (docs/design/scale.md).
-- Before this, the doorbell's ring passes walked an endpoint's pending todos in age order
-- and filtered out the ones not due, the dead-instance sweep scanned pending todos by the
-- instance they were rung through, and the metrics collectors and the board counted whole
-- tables. Each index below holds only the rows one pass may pick, in the order it picks
-- them, so a pass reads the handful of rows it rings. They are all partial on pending
-- todos: a claim moves its row out of them, which writes nothing to them, so the claim →
-- complete path pays none of them; a create pays one entry in each it matches, and a ring
-- (which now changes indexed columns) pays one more entry per index.
--
-- The constants 6 (MAX_RINGS) and 1..4 (the re-ring schedule's length) are doorbell/pump.ts's;
-- the statements in store/rings.ts repeat them literally so the planner can match these
-- predicates.

-- The sender-verified, non-synthetic pending todos with ring budget left: the only todos
-- any ring pass may pick.
-- 'ready' rings: not rung since they were created or last requeued, oldest first per queue.
CREATE INDEX todos_ring_ready_idx ON todos (endpoint_id, queue, created_at)
  WHERE state = 'pending' AND ring_attempts < 6 AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook')
    AND (last_ringed_at IS NULL OR last_ringed_at < updated_at);
-- 'reopen' and 'attach' rings: any of them not rung in the last minute, oldest first per
-- queue (the minute filter skips only what was rung in that minute).
CREATE INDEX todos_ringable_idx ON todos (endpoint_id, queue, created_at)
  WHERE state = 'pending' AND ring_attempts < 6 AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook');
-- The heartbeat re-ring: the k-th re-ring is due once the todo is schedule[k] old, so per
-- (queue, rings so far) the due rows are a prefix in age order.
CREATE INDEX todos_rering_idx ON todos (endpoint_id, queue, ring_attempts, created_at)
  WHERE state = 'pending' AND ring_attempts BETWEEN 1 AND 4 AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook');
-- The dead-instance sweep: pending todos rung through an instance, by when.
CREATE INDEX todos_rung_instance_idx ON todos (last_rung_instance, last_ringed_at)
  WHERE state = 'pending' AND last_rung_instance IS NOT NULL;
-- Notify hooks: pending todos whose latest ready transition no hook decision has seen,
-- by when it happened (store/notify-hooks.ts reads only the recent ones).
CREATE INDEX todos_hook_undecided_idx ON todos (endpoint_id, queue, updated_at)
  WHERE state = 'pending' AND NOT synthetic
    AND (created_by_human_id IS NOT NULL OR created_by_endpoint_id IS NOT NULL OR source = 'webhook')
    AND (hook_fired_at IS NULL OR hook_fired_at < updated_at);
-- Superseded by the indexes above (it ordered every pending todo of every endpoint).
DROP INDEX todos_pending_age_idx;

-- Terminal rows per queue, most recently changed first, one index per board lane (done;
-- dead letters and canceled): the board reads a page of each, and retention walks each
-- queue's oldest. They replace the global index on updated_at, so a completion still
-- writes one terminal entry.
CREATE INDEX todos_done_queue_idx ON todos (endpoint_id, queue, updated_at) WHERE state = 'done';
CREATE INDEX todos_dead_queue_idx ON todos (endpoint_id, queue, updated_at)
  WHERE state = 'canceled' OR (state = 'failed' AND next_retry_at IS NULL);
DROP INDEX todos_terminal_idx;

-- Open notification streams: the ring target per endpoint, the re-ring's endpoints, and the
-- streams a dead instance held. Closed sessions stay in mcp_sessions until retention.
CREATE INDEX mcp_sessions_open_streams_idx ON mcp_sessions (endpoint_id) WHERE stream_open AND closed_at IS NULL;
CREATE INDEX mcp_sessions_open_streams_instance_idx ON mcp_sessions (instance)
  WHERE stream_open AND closed_at IS NULL;
-- Live sessions (the idle-session sweep reads them all: a set bounded by what is connected).
CREATE INDEX mcp_sessions_live_idx ON mcp_sessions (endpoint_id, id) WHERE closed_at IS NULL;

-- How many todos each (endpoint, queue) holds in each state, exact, without counting rows.
-- Every change of a todo's state appends one row to todo_count_deltas (triggers below, in
-- the statement that made the change, so the delta commits or rolls back with it); a
-- sweep folds the deltas into todo_counts. A reader sums both in one statement, so it sees
-- one snapshot in which every committed change is counted exactly once. The delta table has
-- no key on purpose: appends never contend (no row is updated twice), and the fold deletes
-- all it sees; its one index serves the reads of one endpoint or queue. Synthetic
-- (self-test) todos are not counted (they are in no metric or lane).
CREATE TABLE todo_counts (
  endpoint_id  text NOT NULL,
  queue        text NOT NULL,
  state        text NOT NULL,
  n            bigint NOT NULL,
  PRIMARY KEY (endpoint_id, queue, state)
);
CREATE TABLE todo_count_deltas (
  endpoint_id  text NOT NULL,
  queue        text NOT NULL,
  from_state   text,
  to_state     text,
  n            integer NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);
CREATE INDEX todo_count_deltas_queue_idx ON todo_count_deltas (endpoint_id, queue);

INSERT INTO todo_counts (endpoint_id, queue, state, n)
  SELECT endpoint_id, queue, state, count(*) FROM todos WHERE NOT synthetic GROUP BY 1, 2, 3;

-- A state change of one row: a row-level trigger with a WHEN clause, so updates that keep
-- the state (heartbeats, rings) never enter PL/pgSQL.
CREATE FUNCTION todo_counts_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO todo_count_deltas VALUES (NEW.endpoint_id, NEW.queue, OLD.state, NEW.state, 1);
  RETURN NULL;
END
$$;
CREATE TRIGGER todos_count_update AFTER UPDATE OF state ON todos
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state AND NOT NEW.synthetic)
  EXECUTE FUNCTION todo_counts_update();

-- Inserts and deletes come in batches (bulk create, retention): one delta per
-- (endpoint, queue, state) of the statement.
CREATE FUNCTION todo_counts_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO todo_count_deltas
    SELECT endpoint_id, queue, NULL, state, count(*) FROM added WHERE NOT synthetic GROUP BY 1, 2, 4;
  RETURN NULL;
END
$$;
CREATE TRIGGER todos_count_insert AFTER INSERT ON todos
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION todo_counts_insert();

-- A delete that is part of deleting the endpoint itself adds nothing: its counts go with it.
CREATE FUNCTION todo_counts_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO todo_count_deltas
    SELECT g.endpoint_id, g.queue, g.state, NULL, count(*) FROM gone g
     WHERE NOT g.synthetic AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = g.endpoint_id)
     GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
CREATE TRIGGER todos_count_delete AFTER DELETE ON todos
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION todo_counts_delete();

CREATE FUNCTION endpoint_counts_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM todo_counts c USING gone g WHERE c.endpoint_id = g.id;
  DELETE FROM todo_count_deltas d USING gone g WHERE d.endpoint_id = g.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER endpoints_delete_counts AFTER DELETE ON endpoints
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION endpoint_counts_delete();

-- The exact number of (endpoint, queue)'s todos in a state: its folded count plus the
-- deltas not folded yet. Two index probes, whatever the number of todos.
CREATE FUNCTION todo_count(p_endpoint text, p_queue text, p_state text) RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT n FROM todo_counts WHERE endpoint_id = p_endpoint AND queue = p_queue AND state = p_state), 0)
       + coalesce((SELECT sum(CASE WHEN to_state = p_state THEN n ELSE 0 END - CASE WHEN from_state = p_state THEN n ELSE 0 END)
                     FROM todo_count_deltas
                    WHERE endpoint_id = p_endpoint AND queue = p_queue
                      AND (from_state = p_state OR to_state = p_state)), 0)
$$;

-- The claim's ring acknowledgement (0010) as two updates, one per kind of open ring: the
-- rung todo's own rings by (endpoint_id, todo_id), and the endpoint's digests (todo_id is
-- NULL for a digest) by the same index. As one OR the function's cached generic plan
-- scanned every doorbell ring on each claim of a rung todo: measured in the reliability
-- suite's long form, 10 sequential scans of ~300,000 rings a second.
CREATE OR REPLACE FUNCTION ack_rings_of_claim(p_endpoint text, p_todo text, p_session text)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  answer jsonb;
BEGIN
  WITH own AS (
    UPDATE doorbell_rings SET acked_at = now(), ack_via = 'claim', acked_session_id = p_session
     WHERE endpoint_id = p_endpoint AND todo_id = p_todo AND acked_at IS NULL
    RETURNING kind, synthetic, session_id, (unheard_at IS NULL) AS in_window),
  digests AS (
    UPDATE doorbell_rings SET acked_at = now(), ack_via = 'claim', acked_session_id = p_session
     WHERE endpoint_id = p_endpoint AND todo_id IS NULL AND acked_at IS NULL AND kind = 'digest' AND sent_at <= now()
    RETURNING kind, synthetic, session_id, (unheard_at IS NULL) AS in_window),
  acked AS (SELECT * FROM own UNION ALL SELECT * FROM digests),
  cleared AS (
    UPDATE mcp_sessions s SET unheard = false
     WHERE s.endpoint_id = p_endpoint AND s.unheard AND s.id IN (SELECT session_id FROM acked))
  SELECT jsonb_agg(jsonb_build_object('kind', kind, 'synthetic', synthetic, 'in_window', in_window))
    INTO answer FROM acked;
  RETURN answer;
END
$$;
