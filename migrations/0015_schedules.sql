-- 0015: recurring schedules (docs/design/schedules.md). A schedule is a todo template on
-- one (endpoint, queue) with a five-field cron expression read in an IANA zone. The tick
-- claims the due rows (next_run_at <= now, not paused) FOR UPDATE SKIP LOCKED, creates
-- one todo through the ordinary create path and moves next_run_at past now in the same
-- transaction, so each occurrence makes one todo however many instances tick.
--
-- next_run_at is NULL while the schedule is paused; resuming computes it from that
-- moment, so a pause never ends in a burst. last_run_at / last_todo_id / last_missed
-- record the latest firing: last_missed counts the occurrences that firing stood in for
-- after downtime (capped, see src/schedules/occurrence.ts). last_error says why the
-- latest due occurrence made no todo (the endpoint revoked, the queue no longer granted).
CREATE TABLE schedules (
  endpoint_id          text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id                   text NOT NULL,
  queue                text NOT NULL,
  cron                 text NOT NULL CHECK (length(cron) BETWEEN 9 AND 200),
  tz                   text NOT NULL CHECK (length(tz) BETWEEN 1 AND 64),
  title                text NOT NULL,
  body                 text NOT NULL DEFAULT '',
  payload              jsonb,
  kind                 text,
  priority             smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
  paused               boolean NOT NULL DEFAULT false,
  next_run_at          timestamptz,
  last_run_at          timestamptz,
  last_todo_id         text,
  last_missed          integer NOT NULL DEFAULT 0 CHECK (last_missed >= 0),
  last_error           text,
  created_by_human_id  text NOT NULL,
  updated_by_human_id  text NOT NULL,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, id),
  CHECK (paused = (next_run_at IS NULL))
);

-- The schedule a todo was made by (DESIGN's data model); NULL for every other todo. Not a
-- foreign key: a todo outlives its schedule, as its history. Adding a NULL column rewrites
-- nothing.
ALTER TABLE todos ADD COLUMN schedule_id text;

-- The tick reads the due prefix of this index and nothing else.
CREATE INDEX schedules_due_idx ON schedules (next_run_at) WHERE NOT paused;

-- Who changed what, when: one row per create, update, pause, resume and delete, with the
-- changed fields as {field: {old, new}}. Not a foreign key: the audit outlives the
-- schedule (and, like admission_policy_audit, the endpoint).
CREATE TABLE schedule_audit (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id     text NOT NULL,
  endpoint_id     text NOT NULL,
  actor_human_id  text NOT NULL,
  action          text NOT NULL CHECK (action IN ('create', 'update', 'pause', 'resume', 'delete')),
  changes         jsonb NOT NULL,
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedule_audit_scope_idx ON schedule_audit (endpoint_id, schedule_id, at DESC);
-- Retention deletes the oldest entries in batches (src/sweeps/retention.ts).
CREATE INDEX schedule_audit_age_idx ON schedule_audit (at);
