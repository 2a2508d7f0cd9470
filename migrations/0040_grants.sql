-- 0040: hand-off grants, todo lineage and the reply outbox (docs/design/handoff.md).
--
-- A grant lets endpoint `from` create todos on the named queues of endpoint `to` (one
-- direction). Within one owner it is born `active`; across owners it is `requested` by
-- the from-side owner and becomes `active` or `denied` by the to-side owner's decision.
-- Either side's owner revokes it (`revoked`). At most one live (requested or active)
-- grant per direction. A hand-off locks the grant row (FOR UPDATE) in the transaction that
-- inserts the todo, so a revoke waits for hand-offs in flight and every hand-off that
-- starts after the revoke committed sees it. window_start / window_count is the optional
-- rate (hand-offs per hour), counted on the locked row.
CREATE TABLE grants (
  id                text PRIMARY KEY,
  from_endpoint_id  text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  to_endpoint_id    text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  queues            text[] NOT NULL,
  max_priority      integer,
  rate_per_hour     integer CHECK (rate_per_hour IS NULL OR rate_per_hour > 0),
  state             text NOT NULL CHECK (state IN ('active', 'requested', 'denied', 'revoked')),
  -- Humans as records, not FKs, like the audits: deleting a human keeps who did what.
  requested_by      text NOT NULL,
  decided_by        text,
  revoked_by        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  decided_at        timestamptz,
  revoked_at        timestamptz,
  window_start      timestamptz,
  window_count      integer NOT NULL DEFAULT 0,
  CHECK (from_endpoint_id <> to_endpoint_id)
);
CREATE UNIQUE INDEX grants_live_idx ON grants (from_endpoint_id, to_endpoint_id) WHERE state IN ('active', 'requested');
CREATE INDEX grants_to_idx ON grants (to_endpoint_id);

-- Who did what to a grant, with both owners named so each side reads its own history.
-- Not FKs: the record outlives the grant, both endpoints and both humans.
CREATE TABLE grant_audit (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  grant_id          text NOT NULL,
  from_human_id     text NOT NULL,
  to_human_id       text NOT NULL,
  actor_human_id    text NOT NULL,
  action            text NOT NULL CHECK (action IN ('create', 'request', 'approve', 'deny', 'revoke')),
  detail            jsonb NOT NULL DEFAULT '{}',
  at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX grant_audit_grant_idx ON grant_audit (grant_id, at);
CREATE INDEX grant_audit_from_idx ON grant_audit (from_human_id, at DESC);
CREATE INDEX grant_audit_to_idx ON grant_audit (to_human_id, at DESC);
-- Retention deletes by age.
CREATE INDEX grant_audit_at_idx ON grant_audit (at);

-- Lineage: the child todo a create_todo made with parent_id or reply, the endpoint that
-- sent it, its parent (one of the sender's todos, or none), whether its outcome goes back
-- (reply), where a reply todo lands when no session of the sender is live (reply_queue),
-- and its depth in the chain of hand-offs (the parent's depth + 1; bounded by
-- SWITCHBOARD_HANDOFF_DEPTH_MAX). Keyed by the child's endpoint first, like every tenant table.
CREATE TABLE todo_links (
  child_endpoint_id   text NOT NULL,
  child_id            text NOT NULL,
  from_endpoint_id    text NOT NULL,
  parent_id           text,
  reply               boolean NOT NULL,
  reply_queue         text NOT NULL,
  depth               integer NOT NULL CHECK (depth >= 1),
  created_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (child_endpoint_id, child_id)
);
CREATE INDEX todo_links_parent_idx ON todo_links (from_endpoint_id, parent_id) WHERE parent_id IS NOT NULL;

-- The reply outbox: one row per child whose sender asked for its outcome, written by the
-- trigger below in the transaction that ends the child (whichever path ends it: complete,
-- fail for good, cancel, the reaper's dead letter, a bulk cancel, a revoke). The delivery
-- (src/grants/reply.ts) takes rows with FOR UPDATE SKIP LOCKED and marks each delivered in
-- the transaction that queued its message or created its todo, so an outcome is never lost
-- and never delivered twice. One reply per child: a todo retried after it ended does not
-- reply again.
CREATE TABLE handoff_replies (
  child_endpoint_id  text NOT NULL,
  child_id           text NOT NULL,
  endpoint_id        text NOT NULL,
  parent_id          text,
  reply_queue        text NOT NULL,
  state              text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  delivered_at       timestamptz,
  delivered_as       text CHECK (delivered_as IN ('message', 'todo', 'dropped')),
  delivered_ref      text,
  PRIMARY KEY (child_endpoint_id, child_id)
);
CREATE INDEX handoff_replies_due_idx ON handoff_replies (created_at) WHERE delivered_at IS NULL;
-- Retention deletes delivered rows by age.
CREATE INDEX handoff_replies_delivered_idx ON handoff_replies (delivered_at) WHERE delivered_at IS NOT NULL;

CREATE FUNCTION todo_handoff_reply() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO handoff_replies (child_endpoint_id, child_id, endpoint_id, parent_id, reply_queue, state)
    SELECT l.child_endpoint_id, l.child_id, l.from_endpoint_id, l.parent_id, l.reply_queue, NEW.state
      FROM todo_links l
     WHERE l.child_endpoint_id = NEW.endpoint_id AND l.child_id = NEW.id AND l.reply
  ON CONFLICT DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('switchboard', json_build_object('type', 'handoff_reply', 'endpoint_id', NEW.endpoint_id)::text);
  END IF;
  RETURN NULL;
END
$$;
-- Only a todo's end enters PL/pgSQL (done, canceled, or failed with no retry left); the
-- claim and complete paths of todos nobody asked about pay one index probe.
CREATE TRIGGER todos_handoff_reply AFTER UPDATE OF state, next_retry_at ON todos
  FOR EACH ROW WHEN (
    (NEW.state IN ('done', 'canceled') OR (NEW.state = 'failed' AND NEW.next_retry_at IS NULL))
    AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.next_retry_at IS DISTINCT FROM NEW.next_retry_at)
    AND NOT NEW.synthetic)
  EXECUTE FUNCTION todo_handoff_reply();

-- A pruned or deleted todo takes its lineage row with it (as the child; a child whose
-- parent was pruned keeps its row, and its depth, with a parent that reads as gone).
CREATE FUNCTION todo_links_cascade() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM todo_links l USING gone g WHERE l.child_endpoint_id = g.endpoint_id AND l.child_id = g.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER todos_delete_links AFTER DELETE ON todos
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION todo_links_cascade();
