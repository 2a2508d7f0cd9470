-- 0005: per-queue admission policies (seed 000, DESIGN §9).
-- Additive: a queue without a policy row behaves exactly as before. Ids of humans and
-- endpoints are text here (prefix + ULID), so the references are text where the seed's
-- were uuid; the policy's own id stays a uuid as the seed has it.

CREATE TABLE admission_policies (
  id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id            text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  queue                  text NOT NULL,
  max_in_flight          int CHECK (max_in_flight BETWEEN 0 AND 10000),
  max_claims_per_window  int CHECK (max_claims_per_window BETWEEN 0 AND 1000000),
  window_period          text CHECK (window_period IN ('hour', 'day', 'week')),
  window_tz              text,
  window_start           text CHECK (window_start ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  window_weekday         text CHECK (window_weekday IN ('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun')),
  created_by_human_id    text NOT NULL REFERENCES humans (id),
  updated_by_human_id    text NOT NULL REFERENCES humans (id),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  -- Not a deferral state (deferral is derived at read time): the instant work of this
  -- queue was last held back without a push (a refused claim, a withheld doorbell). The
  -- reopen sweep clears it with a conditional update when the queue admits again, and
  -- only the instance whose update matched sends the one todo_ready.
  held_at                timestamptz,
  CHECK (max_in_flight IS NOT NULL OR max_claims_per_window IS NOT NULL),
  CHECK (max_claims_per_window IS NULL
         OR (window_period IS NOT NULL AND window_tz IS NOT NULL AND window_start IS NOT NULL)),
  CHECK ((window_period = 'week') = (window_weekday IS NOT NULL))
);
CREATE UNIQUE INDEX idx_admission_policies_endpoint_queue ON admission_policies (endpoint_id, queue);
-- The reopen sweep's scan: only policies that owe a push.
CREATE INDEX idx_admission_policies_held ON admission_policies (held_at) WHERE held_at IS NOT NULL;

CREATE TABLE admission_windows (
  policy_id     uuid NOT NULL REFERENCES admission_policies (id) ON DELETE CASCADE,
  window_start  timestamptz NOT NULL,
  used          int NOT NULL DEFAULT 0 CHECK (used >= 0),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (policy_id, window_start)
);
-- Retention: windows older than 35 days are pruned by age.
CREATE INDEX idx_admission_windows_age ON admission_windows (window_start);

CREATE TABLE admission_policy_audit (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  policy_id          uuid NOT NULL,  -- not an FK: the audit outlives a deleted policy
  endpoint_id        text NOT NULL,  -- the scope, for owner-filtered reads
  queue              text NOT NULL,
  actor_human_id     text NOT NULL,  -- the accountable human, always
  actor_endpoint_id  text,           -- set when a granted agent made the change
  action             text NOT NULL CHECK (action IN ('create', 'update', 'delete')),
  before             jsonb,
  after              jsonb,
  at                 timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_admission_audit_scope ON admission_policy_audit (endpoint_id, queue, at DESC);

-- In-flight reads under the policy lock.
CREATE INDEX idx_todos_claimed_endpoint_queue ON todos (endpoint_id, queue) WHERE state = 'claimed';

-- The policy half of a claim on an endpoint with budgets, called by the claim statement
-- after it has locked the candidate todo (lock order: todo, then policy). It locks the
-- candidate queue's policy row, then reads the in-flight count and the window counter; a
-- VOLATILE function takes a fresh snapshot for each query, so those reads see every
-- claim the previous lock holder committed. It decides, charges one unit of the current
-- window when it admits, and returns the instant the claim is stamped with (read after
-- the counts). The whole claim is then one statement, so the policy lock is held only
-- until that statement commits (the seed's BEGIN … COMMIT held it across three round
-- trips, which capped a hot queue far below its target).
-- The application passes what it read of the endpoint's policies without a lock (queue,
-- updated_at) and the window bounds it computed for each (zoned arithmetic lives in
-- src/admission/); a queue with no policy row and none expected is admitted uncharged
-- and unlocked. o_stale asks the caller to read the policies again: one was created,
-- changed or deleted since, or a window boundary passed.
CREATE FUNCTION admission_admit(p_endpoint_id text, p_queue text, p_todo_id text, p_queues text[],
    p_updated_at timestamptz[], p_window_start timestamptz[], p_window_next timestamptz[])
RETURNS TABLE (o_admitted boolean, o_stale boolean, o_policy_id uuid, o_at timestamptz, o_in_flight int,
    o_used int, o_earliest_lease timestamptz)
LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
DECLARE
  pol admission_policies%ROWTYPE;
  i int := array_position(p_queues, p_queue);
BEGIN
  SELECT * INTO pol FROM admission_policies p
   WHERE p.endpoint_id = p_endpoint_id AND p.queue = p_queue FOR UPDATE;
  o_policy_id := pol.id;
  o_in_flight := 0;
  o_used := 0;
  o_at := clock_timestamp();
  IF NOT FOUND AND i IS NULL THEN
    o_admitted := true;
    o_stale := false;
    RETURN NEXT;
    RETURN;
  END IF;
  o_admitted := false;
  o_stale := i IS NULL OR NOT FOUND OR pol.updated_at IS DISTINCT FROM p_updated_at[i];
  IF o_stale THEN
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT count(*)::int, min(t.lease_expires_at) INTO o_in_flight, o_earliest_lease FROM todos t
   WHERE t.endpoint_id = p_endpoint_id AND t.queue = p_queue AND t.state = 'claimed' AND t.id <> p_todo_id;
  o_at := clock_timestamp();
  IF pol.max_claims_per_window IS NOT NULL THEN
    IF p_window_start[i] IS NULL OR o_at < p_window_start[i] OR o_at >= p_window_next[i] THEN
      o_stale := true;
      RETURN NEXT;
      RETURN;
    END IF;
    SELECT coalesce(max(w.used), 0) INTO o_used FROM admission_windows w
     WHERE w.policy_id = pol.id AND w.window_start = p_window_start[i];
  END IF;
  o_admitted := coalesce(pol.max_in_flight, 1) <> 0
    AND (pol.max_in_flight IS NULL OR o_in_flight < pol.max_in_flight)
    AND (pol.max_claims_per_window IS NULL OR o_used < pol.max_claims_per_window);
  IF o_admitted AND pol.max_claims_per_window IS NOT NULL THEN
    INSERT INTO admission_windows AS w (policy_id, window_start, used) VALUES (pol.id, p_window_start[i], 1)
      ON CONFLICT (policy_id, window_start) DO UPDATE SET used = w.used + 1, updated_at = now();
  END IF;
  RETURN NEXT;
END
$$;
