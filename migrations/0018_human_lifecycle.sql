-- 0018: the human lifecycle (docs/design/people.md): a human is active or disabled, an
-- admin can issue a one-time password-reset link, and every change an admin makes to a
-- human is audited.

-- Disabled: no sign-in, no API token, no board session, and their endpoints'
-- credentials authenticate as nothing until the human is enabled again.
ALTER TABLE humans ADD COLUMN state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled'));
-- The last-admin check locks the active admins: a handful of rows, read through this index.
CREATE INDEX humans_active_admins_idx ON humans (id) WHERE role = 'admin' AND state = 'active';

-- Password-reset links ride on the one-time links of 0002: purpose `reset`, for one human.
ALTER TABLE setup_tokens DROP CONSTRAINT setup_tokens_purpose_check, DROP CONSTRAINT setup_tokens_check;
ALTER TABLE setup_tokens
  ADD CONSTRAINT setup_tokens_purpose_check CHECK (purpose IN ('setup', 'invite', 'reset')),
  ADD CONSTRAINT setup_tokens_check CHECK ((purpose = 'setup') = (human_id IS NULL));

-- A policy names who wrote it as a record, like its audit: deleting that human must not
-- be refused because of it (nor delete the policy).
ALTER TABLE admission_policies
  DROP CONSTRAINT admission_policies_created_by_human_id_fkey,
  DROP CONSTRAINT admission_policies_updated_by_human_id_fkey;

-- Who changed which human how: create, disable, enable, role, reset, delete,
-- token_revoke, password. Not FKs, like the other audits: the record outlives both humans.
CREATE TABLE human_audit (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  human_id        text NOT NULL,
  actor_human_id  text NOT NULL,
  action          text NOT NULL CHECK (action IN ('create', 'disable', 'enable', 'role', 'reset', 'delete', 'token_revoke', 'password')),
  detail          jsonb NOT NULL DEFAULT '{}',
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX human_audit_scope ON human_audit (human_id, at DESC);
-- Retention deletes by age.
CREATE INDEX human_audit_at ON human_audit (at);
