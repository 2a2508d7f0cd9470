-- 0025: the OAuth 2.1 authorization server for /mcp (docs/design/oauth.md). Clients
-- register themselves (RFC 7591, public clients only); a human's consent on the board makes
-- a grant — one client acting as one of that human's endpoints — and an authorization code
-- for it; the code buys the grant's first tokens, and each refresh rotates them. Every code
-- and token is stored as the SHA-256 of a 256-bit random secret, like `sbk_` credentials.
-- A grant is one family: revoking it (the client, the human, the endpoint, a replayed code
-- or a reused refresh token) kills every token it issued and closes the MCP sessions it
-- opened, which mcp_sessions.oauth_grant_id records.

CREATE TABLE oauth_clients (
  id text PRIMARY KEY,
  client_name text,
  -- Compared exactly (RFC 9700 §4.1.3); a loopback URI matches with any port (RFC 8252 §7.3).
  redirect_uris text[] NOT NULL,
  -- The registered metadata as answered, so a client reads back what it registered.
  metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_grants (
  id text PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
  endpoint_id text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  human_id text NOT NULL REFERENCES humans (id) ON DELETE CASCADE,
  resource text NOT NULL,
  scope text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set when its code is first exchanged: before that the grant is only an approval.
  issued_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  revoked_reason text
);
-- The board's list of a human's authorized clients per endpoint.
CREATE INDEX oauth_grants_endpoint_idx ON oauth_grants (endpoint_id) WHERE revoked_at IS NULL;
CREATE INDEX oauth_grants_human_idx ON oauth_grants (human_id) WHERE revoked_at IS NULL;

CREATE TABLE oauth_codes (
  hash bytea PRIMARY KEY,
  grant_id text NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

CREATE TABLE oauth_tokens (
  hash bytea PRIMARY KEY,
  grant_id text NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at timestamptz NOT NULL,
  -- A refresh token's rotation: set when it bought the next pair; presenting it again is reuse.
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_grant_idx ON oauth_tokens (grant_id);

ALTER TABLE mcp_sessions ADD COLUMN oauth_grant_id text REFERENCES oauth_grants (id) ON DELETE SET NULL;
CREATE INDEX mcp_sessions_oauth_grant_idx ON mcp_sessions (oauth_grant_id)
  WHERE oauth_grant_id IS NOT NULL AND closed_at IS NULL;
