-- 0023: a compact per-minute history of each queue, for the board's charts
-- (docs/design/queue-rollups.md). One row per (endpoint, queue, minute) in which the queue
-- held live work or moved: depth (ready pending todos), in flight (claimed), the oldest
-- ready pending todo's ready_at, and the todos created, completed and failed in that
-- minute. Depth, in flight and oldest are sampled once a minute by the queue_rollup sweep
-- from the maintained counters plus one index probe per queue; the throughput columns are
-- added by the counter fold (store/todo-counts.ts) from the deltas it folds, so no pass
-- ever reads todos to count them. Rows older than SWITCHBOARD_ROLLUP_RETENTION are pruned.
CREATE TABLE queue_rollups (
  endpoint_id      text NOT NULL,
  queue            text NOT NULL,
  minute           timestamptz NOT NULL,
  depth            integer NOT NULL DEFAULT 0,
  in_flight        integer NOT NULL DEFAULT 0,
  created          integer NOT NULL DEFAULT 0,
  completed        integer NOT NULL DEFAULT 0,
  failed           integer NOT NULL DEFAULT 0,
  oldest_ready_at  timestamptz,
  PRIMARY KEY (endpoint_id, queue, minute)
);
-- Retention deletes the oldest minutes first across every queue: one entry per row written,
-- so a prune batch reads only the rows it deletes.
CREATE INDEX queue_rollups_minute_idx ON queue_rollups (minute);
