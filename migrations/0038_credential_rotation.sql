-- 0038: an endpoint's credential can be replaced while its slug stays
-- (docs/design/mcp-surface.md, "Rotating a credential"). The slug is
-- what `.mcp.json`, the channel flag and the allowed tools name, so a rotation keeps all
-- three valid; only the bearer changes.
--
-- previous_credential_hash: the replaced credential's hash, accepted until
-- previous_credential_expires_at so agents can be moved to the new one without a gap.
-- The authentication statements are unchanged (they probe credential_hash); only a miss
-- tries this column, through its own partial unique index.

ALTER TABLE endpoints
  ADD COLUMN previous_credential_hash bytea,
  ADD COLUMN previous_credential_prefix text,
  ADD COLUMN previous_credential_expires_at timestamptz;

CREATE UNIQUE INDEX endpoints_previous_credential_idx ON endpoints (previous_credential_hash)
  WHERE previous_credential_hash IS NOT NULL;
