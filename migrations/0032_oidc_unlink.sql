-- 0032: an admin can unlink a human from their OIDC provider account (docs/design/oauth.md,
-- "Unlinking"), for a person whose account at the provider was replaced: the new account
-- has the same e-mail but another subject, and its sign-in is refused while the old link
-- stands. The unlink is audited with the link it removed.
ALTER TABLE human_audit DROP CONSTRAINT human_audit_action_check;
ALTER TABLE human_audit ADD CONSTRAINT human_audit_action_check
  CHECK (action IN ('create', 'disable', 'enable', 'role', 'reset', 'delete', 'token_revoke', 'password', 'oidc_unlink'));
