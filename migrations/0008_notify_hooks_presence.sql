-- 0008: notify hooks (outbound webhooks) and endpoint presence (DESIGN §11).
--
-- notify_hooks: an endpoint's outbound HTTPS URLs, at most 5 each (enforced in the insert
-- statement). The signing secret must be readable to sign, so it is stored as issued;
-- prev_secret signs alongside it until prev_secret_expires_at (24 h rotation grace).
CREATE TABLE notify_hooks (
  endpoint_id             text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id                      text NOT NULL,
  url                     text NOT NULL CHECK (char_length(url) <= 2048),
  queues                  text[] NOT NULL DEFAULT ARRAY[]::text[],
  ignore_presence         boolean NOT NULL DEFAULT false,
  secret                  text NOT NULL,
  prev_secret             text,
  prev_secret_expires_at  timestamptz,
  enabled                 boolean NOT NULL DEFAULT true,
  disabled_reason         text CHECK (disabled_reason IN ('consecutive_failures', 'operator')),
  consecutive_failures    integer NOT NULL DEFAULT 0,
  last_attempt_at         timestamptz,
  last_status             integer,
  last_error              text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, id)
);
CREATE UNIQUE INDEX notify_hooks_id_idx ON notify_hooks (id);
-- The ceiling's counter: taking a slot is a conditional UPDATE of the endpoint row, which
-- concurrent creates cannot race past (a count in the insert statement could be).
ALTER TABLE endpoints ADD COLUMN notify_hooks_used integer NOT NULL DEFAULT 0 CHECK (notify_hooks_used >= 0);

-- The last ready transition a hook notification was decided for: a todo is due one when
-- it became ready (updated_at) after this mark, and the deciding UPDATE is conditional on
-- it, so of all instances hearing the same todo_ready exactly one delivers.
ALTER TABLE todos ADD COLUMN hook_fired_at timestamptz;

-- Presence: the shift expression, an override (in/out, until; NULL until = indefinite)
-- and who set it, and the effective presence as last decided (presence_seen). A change of
-- presence_seen is a conditional UPDATE, so a transition is decided once across
-- instances; a change to `in` sets digest_due_at, which one instance claims to send the
-- digest ring and the todos.backlog hook delivery.
ALTER TABLE endpoints
  ADD COLUMN shift text,
  ADD COLUMN presence_override text CHECK (presence_override IN ('in', 'out')),
  ADD COLUMN override_until timestamptz,
  ADD COLUMN override_by text,
  ADD COLUMN presence_seen text NOT NULL DEFAULT 'in' CHECK (presence_seen IN ('in', 'out')),
  ADD COLUMN presence_changed_at timestamptz,
  ADD COLUMN digest_due_at timestamptz,
  ADD COLUMN digest_reason text;
CREATE INDEX endpoints_presence_idx ON endpoints (id)
  WHERE shift IS NOT NULL OR presence_override IS NOT NULL OR presence_seen = 'out' OR digest_due_at IS NOT NULL;
