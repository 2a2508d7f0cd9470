-- Bulk cancel / retry of an endpoint's todos (docs/design/todos.md, "Bulk actions"):
-- who ran which action with which filter, how many todos it matched and changed. The row
-- is written when the action starts and finished when its last batch commits, so an
-- action cut short (a restart) is still on record, with finished_at null.
CREATE TABLE todo_bulk_audit (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id     text NOT NULL,  -- not an FK, like admission_policy_audit: the record outlives the endpoint
  actor_human_id  text NOT NULL,
  action          text NOT NULL CHECK (action IN ('cancel', 'retry')),
  filter          jsonb NOT NULL,
  matched         integer NOT NULL,
  changed         integer NOT NULL DEFAULT 0,
  at              timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz
);
CREATE INDEX todo_bulk_audit_scope ON todo_bulk_audit (endpoint_id, at DESC);
-- Retention deletes by age across endpoints.
CREATE INDEX todo_bulk_audit_at ON todo_bulk_audit (at);
