-- 0028: retention of the OAuth tables (docs/design/oauth.md, "Limits and retention"). Each
-- prune of src/store/oauth.ts deletes the oldest dead rows in the order of one of these
-- indexes, so a tick reads about as many rows as it deletes, whatever the table holds:
-- codes and tokens by expiry, grants by revocation or by their last token pair (a grant
-- nobody refreshed for the refresh token's life holds no usable token), and registered
-- clients without a grant by registration time (the grants by client answer the
-- "without a grant" question through an index too).
CREATE INDEX oauth_codes_expires_idx ON oauth_codes (expires_at);
CREATE INDEX oauth_tokens_expires_idx ON oauth_tokens (expires_at);
CREATE INDEX oauth_grants_revoked_idx ON oauth_grants (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX oauth_grants_last_used_idx ON oauth_grants ((coalesce(last_used_at, created_at)))
  WHERE revoked_at IS NULL;
CREATE INDEX oauth_grants_client_idx ON oauth_grants (client_id);
CREATE INDEX oauth_clients_created_idx ON oauth_clients (created_at);
