-- 0002: sign-in (passwords, one-time setup and invite links), API tokens, endpoint
-- credentials and token webhooks. Every secret is stored as a hash: SHA-256 for random
-- high-entropy tokens, scrypt for passwords.

ALTER TABLE humans ADD COLUMN password_hash text;

-- One-time links: the first-admin setup link and invites. Used once, then spent.
CREATE TABLE setup_tokens (
  token_hash  bytea PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('setup', 'invite')),
  human_id    text REFERENCES humans (id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK ((purpose = 'invite') = (human_id IS NOT NULL))
);

CREATE TABLE api_tokens (
  id            text PRIMARY KEY,
  human_id      text NOT NULL REFERENCES humans (id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('human', 'workflow')),
  name          text NOT NULL,
  token_hash    bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  expires_at    timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX api_tokens_human_idx ON api_tokens (human_id);

-- Board sign-in sessions: the cookie holds an opaque token, this table its hash.
CREATE TABLE board_sessions (
  token_hash  bytea PRIMARY KEY,
  human_id    text NOT NULL REFERENCES humans (id) ON DELETE CASCADE,
  csrf_token  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX board_sessions_human_idx ON board_sessions (human_id);

-- A display hint for a credential (`sbk_ab12cd…`), never enough to use it.
ALTER TABLE endpoints ADD COLUMN credential_prefix text;
CREATE INDEX endpoints_expiry_idx ON endpoints (expires_at) WHERE revoked_at IS NULL AND expires_at IS NOT NULL;

-- Token webhooks: the unguessable URL is the credential.
CREATE TABLE webhooks (
  endpoint_id       text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id                text NOT NULL,
  name              text NOT NULL,
  queue             text NOT NULL,
  token_hash        bytea NOT NULL UNIQUE,
  created_at        timestamptz NOT NULL DEFAULT now(),
  rotated_at        timestamptz,
  last_delivery_at  timestamptz,
  PRIMARY KEY (endpoint_id, id)
);
CREATE INDEX webhooks_id_idx ON webhooks (id);

-- Delivery ids seen per webhook: a replay makes no second todo, even after the first
-- one finished (a todo's own idempotency key is only unique over live rows).
CREATE TABLE webhook_deliveries (
  endpoint_id  text NOT NULL,
  webhook_id   text NOT NULL,
  delivery_id  text NOT NULL,
  todo_id      text NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, webhook_id, delivery_id),
  FOREIGN KEY (endpoint_id, webhook_id) REFERENCES webhooks (endpoint_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_age_idx ON webhook_deliveries (received_at);
