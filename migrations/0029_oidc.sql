-- 0029: human sign-in through the organisation's OIDC provider (docs/design/oauth.md,
-- "Human sign-in through OIDC"). A human is linked to the provider's account by the
-- pair (issuer, subject): the provider's stable name for the person, which survives a
-- change of email. Both or neither; one Switchboard human per provider account, found
-- through the unique index (a sign-in is one index probe). No table is added: the flow's
-- state lives in a short-lived cookie, so nothing grows with sign-ins.

ALTER TABLE humans
  ADD COLUMN oidc_issuer text,
  ADD COLUMN oidc_subject text,
  ADD CONSTRAINT humans_oidc_pair CHECK ((oidc_issuer IS NULL) = (oidc_subject IS NULL));

CREATE UNIQUE INDEX humans_oidc_key ON humans (oidc_issuer, oidc_subject) WHERE oidc_issuer IS NOT NULL;
