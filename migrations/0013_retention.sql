-- 0013: retention of the tables that only grow (src/sweeps/retention.ts). Each sweep
-- deletes a batch of the oldest dead rows in the order of the key indexed here, so a batch
-- reads the rows it deletes and stops, however large the table. Tables that already had
-- such an index keep it: webhook_deliveries (received_at) and doorbell_rings (sent_at).
-- Plain CREATE INDEX (a migration is one transaction) blocks writes to the table while it
-- builds; these tables are small next to todos, so that is a short pause at upgrade.

-- Closed sessions by when they closed. A session closes once, so this costs one index
-- entry per session; its other updates (last_seen_at, last_rung_at) do not touch it.
CREATE INDEX mcp_sessions_closed_idx ON mcp_sessions (closed_at) WHERE closed_at IS NOT NULL;

-- Board sign-ins by expiry (written once, at sign-in).
CREATE INDEX board_sessions_expiry_idx ON board_sessions (expires_at);

-- One-time links by when they stopped working: spent (used_at, always before expiry) or
-- else expired. The expression is the sweep's predicate, written the same way.
CREATE INDEX setup_tokens_dead_idx ON setup_tokens ((coalesce(used_at, expires_at)));

-- API tokens by when they stopped working: the earlier of revocation and expiry (least()
-- ignores a NULL; NULL for a live token without expiry). Stamping last_used_at stays HOT.
CREATE INDEX api_tokens_dead_idx ON api_tokens ((least(revoked_at, expires_at)));

-- The audit by age across endpoints (idx_admission_audit_scope serves one queue's reads).
CREATE INDEX idx_admission_audit_age ON admission_policy_audit (at);

-- Finished self-tests by start; an outstanding test (report NULL) is never in it.
CREATE INDEX idx_doorbell_tests_reported ON doorbell_tests (started_at) WHERE report IS NOT NULL;
