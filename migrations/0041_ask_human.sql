-- 0041: an agent asks a human (docs/design/ask-human.md).
--
-- A todo gains the state waiting_on_human: the agent holding it asked a question, its
-- attempt closed with the outcome `asked`, and nobody may claim it until the question is
-- answered, times out, or the todo is canceled. It holds no lease and no ready_at, so
-- no claim path, reaper or doorbell pass ever reads it; its idempotency key stays held
-- (it is live work that comes back).
--
-- todo_asks: one row per question, keyed by the attempt (seq) that asked it. The open
-- one (ended_at null) is the todo's current question; an ended one is how it ended:
-- answered (with text or a choice, who and when), timed_out (the sweep, at expires_at)
-- or canceled (a human canceled the todo). The answer and the timeout each close the
-- open row with one conditional update, so exactly one of them wins. priority_before
-- keeps the priority the todo had when asked: the return to pending raises it to the
-- top of its queue (docs/design/ask-human.md, "Back in line").

ALTER TABLE todos DROP CONSTRAINT todos_state_check,
  ADD CONSTRAINT todos_state_check
    CHECK (state IN ('pending', 'claimed', 'done', 'failed', 'canceled', 'waiting_on_human')) NOT VALID;

ALTER TABLE todo_attempts DROP CONSTRAINT todo_attempts_outcome_check,
  ADD CONSTRAINT todo_attempts_outcome_check
    CHECK (outcome IN ('completed', 'failed', 'released', 'lease_expired', 'reaped', 'canceled', 'revoked',
                       'asked')) NOT VALID;

DROP INDEX todos_idempotency_key;
CREATE UNIQUE INDEX todos_idempotency_key ON todos (endpoint_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL
    AND (state IN ('pending', 'claimed', 'waiting_on_human') OR (state = 'failed' AND next_retry_at IS NOT NULL));

-- The "Needs you" view lists an owner's waiting todos, oldest question first.
CREATE INDEX todos_waiting_on_human_idx ON todos (endpoint_id, updated_at) WHERE state = 'waiting_on_human';

CREATE TABLE todo_asks (
  endpoint_id           text NOT NULL,
  todo_id               text NOT NULL,
  seq                   integer NOT NULL,
  question              text NOT NULL CHECK (char_length(question) BETWEEN 1 AND 4000),
  choices               text[] CHECK (cardinality(choices) BETWEEN 2 AND 20),
  asked_at              timestamptz NOT NULL DEFAULT now(),
  expires_at            timestamptz NOT NULL,
  priority_before       smallint NOT NULL,
  ended_at              timestamptz,
  outcome               text CHECK (outcome IN ('answered', 'timed_out', 'canceled')),
  answer_text           text CHECK (char_length(answer_text) <= 4000),
  answer_choice         integer,
  answered_by_human_id  text,
  -- Who answered, as shown: the human's email when they answered, kept if they go.
  answered_by           text,
  PRIMARY KEY (endpoint_id, todo_id, seq),
  FOREIGN KEY (endpoint_id, todo_id) REFERENCES todos (endpoint_id, id) ON DELETE CASCADE,
  CHECK ((ended_at IS NULL) = (outcome IS NULL)),
  CHECK ((outcome = 'answered') = (answered_by IS NOT NULL)),
  CHECK (outcome IS DISTINCT FROM 'answered' OR ((answer_text IS NULL) <> (answer_choice IS NULL))),
  CHECK (answer_choice IS NULL OR answer_choice BETWEEN 0 AND cardinality(choices) - 1)
);
-- One open question per todo: a second ask would need a claim, which a waiting todo cannot have.
CREATE UNIQUE INDEX todo_asks_open_idx ON todo_asks (endpoint_id, todo_id) WHERE ended_at IS NULL;
-- The timeout sweep: open questions by expiry.
CREATE INDEX todo_asks_expiry_idx ON todo_asks (expires_at) WHERE ended_at IS NULL;

-- Endpoints granted the whole drain family get its new verb, as a new endpoint would.
UPDATE endpoints SET verbs = array_append(verbs, 'ask_human')
 WHERE 'complete' = ANY (verbs) AND 'release' = ANY (verbs) AND NOT 'ask_human' = ANY (verbs);
