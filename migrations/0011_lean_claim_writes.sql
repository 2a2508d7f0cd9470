-- 0011: fewer writes on the claim → complete path. Every claim and every completion is a
-- non-HOT update of todos, so each index on todos is one more index insert (and its WAL)
-- per transition, and the claim's attempt row paid a foreign-key check (a trigger running
-- a locking lookup of the todo the same statement had just updated). Measured on the
-- peers benchmark's cycle (bench/README.md): these three cut PostgreSQL CPU per cycle by
-- about a fifth.

-- The operator lookup by id alone (GET /api/v1/todos/{id}) probes the primary key once per
-- endpoint of the asking human instead (store/todos.ts findTodoEndpoint).
DROP INDEX todos_id_idx;

-- One index over claimed rows serves both readers: admission's in-flight count and earliest
-- lease per queue (a prefix scan), and the reaper, which reads every claimed row — a set
-- bounded by the work in flight, not by the backlog.
DROP INDEX idx_todos_claimed_endpoint_queue;
DROP INDEX todos_lease_idx;
CREATE INDEX todos_claimed_idx ON todos (endpoint_id, queue, lease_expires_at) WHERE state = 'claimed';

-- An attempt row is inserted only by the claim statement, which holds the todo's row lock
-- while it inserts it (store/claims.ts), so the reference holds by construction; the
-- foreign key's per-insert check bought nothing. Its cascade stays: deleting todos (the
-- retention sweep, the self-test cleanup, an endpoint's deletion) deletes their attempts.
ALTER TABLE todo_attempts DROP CONSTRAINT todo_attempts_endpoint_id_todo_id_fkey;

CREATE FUNCTION todo_attempts_cascade() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM todo_attempts a USING gone g WHERE a.endpoint_id = g.endpoint_id AND a.todo_id = g.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER todos_delete_attempts AFTER DELETE ON todos
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION todo_attempts_cascade();

-- Whether the latest claim of the todo was admitted by a queue's policy (seed 000's admit
-- path) rather than made on a queue without one. Settling such a claim (complete, fail,
-- release) may free a held queue's slot, so only then does it look for a held policy to
-- reopen; a claim made where no policy existed settles as it did before admission, with
-- no read of admission_policies. (A policy created while such a claim is in flight gets
-- its reopen from the 30 s sweep.) Not indexed: writing it costs the claim nothing more.
ALTER TABLE todos ADD COLUMN claimed_under_policy boolean NOT NULL DEFAULT false;
