-- 0006: doorbell acknowledgement and the end-to-end self-test (seed 004). A ring row is
-- written by the instance that rang, only for a successful write; a claim (or
-- ack_doorbell) acknowledges it on any instance; the unheard sweep closes the rest.
-- Ring states: open (acked_at and unheard_at NULL) → acknowledged (acked_at set while
-- unheard_at is NULL) or unheard (unheard_at set; a late ack may still record acked_at).
-- Every row is in exactly one state, so sent = acknowledged + unheard + open.
-- Keys lead with endpoint_id like every tenant table (DESIGN §2: distributable by it).

CREATE TABLE doorbell_rings (
  endpoint_id       text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id                text NOT NULL,                    -- rg_<ULID>, the meta.ring_id the client saw
  session_id        text NOT NULL,
  todo_id           text,                             -- NULL for digests; no FK: synthetic todos are deleted
  kind              text NOT NULL CHECK (kind IN ('todo', 'digest', 'test')),
  queue             text,
  synthetic         boolean NOT NULL DEFAULT false,
  sent_at           timestamptz NOT NULL DEFAULT now(),
  acked_at          timestamptz,
  ack_via           text CHECK (ack_via IN ('claim', 'ack')),
  acked_session_id  text,
  unheard_at        timestamptz,
  PRIMARY KEY (endpoint_id, id),
  CHECK ((acked_at IS NULL) = (ack_via IS NULL))
);
-- No unheard_at filter: the claim-ack UPDATE must still find unheard rows to record a late
-- ack without a sequential scan inside the lease transaction.
CREATE INDEX idx_rings_open_todo ON doorbell_rings (endpoint_id, todo_id) WHERE acked_at IS NULL;
-- The unheard sweep: open rings by age.
CREATE INDEX idx_rings_open_age ON doorbell_rings (sent_at) WHERE acked_at IS NULL AND unheard_at IS NULL;
-- The per-session unheard mark reads a session's latest rings.
CREATE INDEX idx_rings_session ON doorbell_rings (endpoint_id, session_id, sent_at DESC);
-- The 7-day prune.
CREATE INDEX idx_rings_sent ON doorbell_rings (sent_at);

-- 0001 already created todos.synthetic (DESIGN §5 lists it); this keeps the seed's
-- statement as a no-op on such databases. The partial index keeps the cleanup sweep cheap.
ALTER TABLE todos ADD COLUMN IF NOT EXISTS synthetic boolean NOT NULL DEFAULT false;
CREATE INDEX idx_todos_synthetic ON todos (created_at) WHERE synthetic;

-- One row per self-test. report is NULL while the test is outstanding and frozen on the
-- synthetic todo's claim, at expiry, or when the ring could not be written at all.
CREATE TABLE doorbell_tests (
  endpoint_id   text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id            text NOT NULL,                        -- dt_<ULID>
  todo_id       text NOT NULL,
  ring_id       text,                                 -- set when the ring is taken, before the write
  wait_seconds  integer NOT NULL CHECK (wait_seconds BETWEEN 10 AND 300),
  started_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  report        jsonb,
  started_via   text NOT NULL CHECK (started_via IN ('mcp', 'api')),
  -- Beyond the seed: the MCP session that started the test, which is the one rung (the
  -- question is "does my setup hear doorbells?"); NULL from the API, where the endpoint's
  -- usual choice of session is rung.
  session_id    text,
  PRIMARY KEY (endpoint_id, id)
);
CREATE INDEX idx_doorbell_tests_endpoint ON doorbell_tests (endpoint_id, started_at DESC);
-- At most one outstanding test per endpoint, race-free across instances.
CREATE UNIQUE INDEX idx_doorbell_tests_outstanding ON doorbell_tests (endpoint_id) WHERE report IS NULL;
-- The expiry sweep: outstanding tests by deadline.
CREATE INDEX idx_doorbell_tests_expiry ON doorbell_tests (expires_at) WHERE report IS NULL;
