-- 0030: the one-time codes of `switchboard login --web` (docs/design/cli-login.md). The board
-- page /cli/login, approved by a signed-in human, makes one and sends the browser back to the
-- CLI's loopback listener with it; POST /api/v1/auth/cli-token spends it for a login token.
-- A code is stored by its SHA-256 only, lives 60 s, is spent by its first presentation, and
-- is bound to the human who approved, the loopback redirect URI, the PKCE S256 challenge and
-- the token name shown on the page. Spent and expired codes are deleted by the sign-in
-- retention sweep through the expiry index (a code is dead once expired, spent or not).
CREATE TABLE cli_login_codes (
  hash bytea PRIMARY KEY,
  human_id text NOT NULL REFERENCES humans (id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  token_name text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cli_login_codes_expiry_idx ON cli_login_codes (expires_at);
-- Deleting a human cascades here: found through this index, not a scan.
CREATE INDEX cli_login_codes_human_idx ON cli_login_codes (human_id);
