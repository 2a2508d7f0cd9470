-- 0036: lease tokens and what an attempt leaves behind (docs/design/todos.md, "Lease
-- tokens" and "What an attempt leaves").
--
-- lease_token_hash: the SHA-256 of the attempt's lease token. The claim statement mints
-- the token (two gen_random_uuid() values, 244 random bits), answers it once and keeps
-- only its hash; heartbeat, complete, fail and release given the token compare hashes on
-- the todo's current attempt (a primary-key probe), so any session of the endpoint, or
-- a request with no session, can settle the claim. Null on attempts opened before this
-- migration and on self-test claims: those are settled by their session only.
--
-- summary (at most 2 KiB; summary_truncated says the agent sent more) and artifact (at
-- most 512 bytes: a URL, a commit) are what an agent said when it ended the attempt;
-- the next claim of the todo answers them as prior_attempts. The columns are added
-- without a rewrite (no volatile default) and the checks NOT VALID, so a large history
-- is not scanned under the table lock: every existing row is null there anyway, and
-- every new row is checked.

ALTER TABLE todo_attempts
  ADD COLUMN lease_token_hash bytea,
  ADD COLUMN summary text,
  ADD COLUMN summary_truncated boolean NOT NULL DEFAULT false,
  ADD COLUMN artifact text,
  ADD CONSTRAINT todo_attempts_summary_size CHECK (octet_length(summary) <= 2048) NOT VALID,
  ADD CONSTRAINT todo_attempts_artifact_size CHECK (octet_length(artifact) <= 512) NOT VALID;
