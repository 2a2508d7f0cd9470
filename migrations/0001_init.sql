-- 0001: humans, endpoints, todos and their attempts, sweep ticks.
-- Every tenant table carries endpoint_id first in its key (DESIGN §2: distributable by
-- endpoint_id). Ids are text (prefix + ULID), minted by the application.

CREATE TABLE humans (
  id            text PRIMARY KEY,
  email         text NOT NULL,
  display_name  text NOT NULL DEFAULT '',
  role          text NOT NULL CHECK (role IN ('admin', 'member')),
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX humans_email_key ON humans (lower(email));

CREATE TABLE endpoints (
  id                     text PRIMARY KEY,
  human_id               text NOT NULL REFERENCES humans (id),
  name                   text NOT NULL,
  slug                   text NOT NULL UNIQUE,
  credential_hash        bytea UNIQUE,
  queues                 text[] NOT NULL DEFAULT ARRAY['inbox'],
  verbs                  text[] NOT NULL DEFAULT ARRAY[]::text[],
  default_lease_seconds  integer CHECK (default_lease_seconds BETWEEN 5 AND 86400),
  expires_at             timestamptz,
  revoked_at             timestamptz,
  last_seen_at           timestamptz,
  created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX endpoints_human_idx ON endpoints (human_id);

-- ready_at is the index key of the claim paths: the earliest instant the row may be
-- claimable (pending: when it became pending; claimed: lease expiry while attempts are
-- left; failed: next_retry_at), NULL when it can never be claimed without a human.
-- The truth is the claimable predicate in store/todos.ts; ready_at only narrows the scan.
CREATE TABLE todos (
  endpoint_id             text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id                      text NOT NULL,
  queue                   text NOT NULL,
  title                   text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
  body                    text NOT NULL DEFAULT '' CHECK (octet_length(body) <= 65536),
  payload                 jsonb,
  kind                    text,
  source                  text,
  created_by_human_id     text,
  created_by_endpoint_id  text,
  idempotency_key         text,
  state                   text NOT NULL DEFAULT 'pending'
                            CHECK (state IN ('pending', 'claimed', 'done', 'failed', 'canceled')),
  attempt                 integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  max_attempts            integer NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 100),
  claims                  integer NOT NULL DEFAULT 0,
  owner_session_id        text,
  lease_expires_at        timestamptz,
  next_retry_at           timestamptz,
  ready_at                timestamptz,
  claimed_at              timestamptz,
  completed_at            timestamptz,
  result                  jsonb,
  error                   text,
  ring_attempts           integer NOT NULL DEFAULT 0,
  last_ringed_at          timestamptz,
  synthetic               boolean NOT NULL DEFAULT false,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, id)
);
-- claim_next over one queue, and over all granted queues (ordered by readiness).
CREATE INDEX todos_ready_queue_idx ON todos (endpoint_id, queue, ready_at) WHERE ready_at IS NOT NULL;
CREATE INDEX todos_ready_idx ON todos (endpoint_id, ready_at) WHERE ready_at IS NOT NULL;
-- Operator lookups by id alone (the API's /todos/{id}), always re-checked for ownership.
CREATE INDEX todos_id_idx ON todos (id);
-- Sweeps: lapsed leases and due retries, across endpoints.
CREATE INDEX todos_lease_idx ON todos (lease_expires_at) WHERE state = 'claimed';
CREATE INDEX todos_retry_idx ON todos (next_retry_at) WHERE state = 'failed' AND next_retry_at IS NOT NULL;
-- Retention: terminal rows by age.
CREATE INDEX todos_terminal_idx ON todos (updated_at)
  WHERE state IN ('done', 'canceled') OR (state = 'failed' AND next_retry_at IS NULL);
-- Idempotent create: unique over live rows only, so a finished todo's key mints a new one.
CREATE UNIQUE INDEX todos_idempotency_key ON todos (endpoint_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL
    AND (state IN ('pending', 'claimed') OR (state = 'failed' AND next_retry_at IS NOT NULL));

-- One row per committed claim. seq counts claims of the todo and never resets.
CREATE TABLE todo_attempts (
  endpoint_id       text NOT NULL,
  todo_id           text NOT NULL,
  seq               integer NOT NULL,
  attempt           integer NOT NULL,
  session_id        text,
  claimed_at        timestamptz NOT NULL DEFAULT now(),
  lease_expires_at  timestamptz NOT NULL,
  ended_at          timestamptz,
  outcome           text CHECK (outcome IN ('completed', 'failed', 'released', 'lease_expired',
                                            'reaped', 'canceled', 'revoked')),
  PRIMARY KEY (endpoint_id, todo_id, seq),
  FOREIGN KEY (endpoint_id, todo_id) REFERENCES todos (endpoint_id, id) ON DELETE CASCADE,
  CHECK ((ended_at IS NULL) = (outcome IS NULL))
) WITH (fillfactor = 90);
-- At most one open attempt per todo holds by construction: attempts open only in the
-- claim statement, which holds the todo row's lock and closes any open attempt first.
-- No partial index guards it on purpose: one would make every close (ended_at set) a
-- non-HOT update with an index write on the hottest path; the race tests check it.

-- One row per sweep: the last tick slot claimed, so each slot runs on one instance.
CREATE TABLE sweep_ticks (
  name        text PRIMARY KEY,
  slot        bigint NOT NULL,
  instance    text NOT NULL,
  claimed_at  timestamptz NOT NULL DEFAULT now()
);
