-- 0039: routing rules, work orders, trusted actors and quarantine (docs/design/routing.md).
--
-- A webhook's rules are one document, saved whole and read whole with the webhook (the
-- ingest lookup reads them in the statement that finds the webhook): an ordered list of
-- {id, name, when, then}, at most SWITCHBOARD_RULES_MAX of them, and the action when none
-- matches. trusted_actors NULL means no trust gate (every actor is trusted, as before this
-- migration); a list, even an empty one, turns the gate on. trust_when is an optional CEL
-- expression that trusts an actor the list does not name (e.g. a GitHub author_association).
ALTER TABLE webhooks
  ADD COLUMN rules jsonb NOT NULL DEFAULT '[]'::jsonb,
  ADD COLUMN rules_default text NOT NULL DEFAULT 'route' CHECK (rules_default IN ('route', 'drop')),
  ADD COLUMN trusted_actors text[],
  ADD COLUMN trust_when text;

-- Work orders: `then.once` gives a key per webhook; the first event to insert it makes
-- its todos, every later one while the key holds is recorded `duplicate`. Inserted in the
-- event's transaction, so racing events wait on the first one's uncommitted row. An
-- expired key is taken over by the next event (the upsert's WHERE); the retention sweep
-- deletes expired ones (the age index).
CREATE TABLE webhook_work_orders (
  endpoint_id  text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  webhook_id   text NOT NULL,
  key          text NOT NULL,
  event_id     text NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (endpoint_id, webhook_id, key),
  FOREIGN KEY (endpoint_id, webhook_id) REFERENCES webhooks (endpoint_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_work_orders_age_idx ON webhook_work_orders (expires_at);

-- Quarantine: an event a rule would route, whose actor is not trusted, is held here
-- instead of becoming todos. It is not a todo: no claim, list, read or long-poll over
-- `todos` can reach it, and nothing rings for it. Kept on the webhook's endpoint (its
-- owner reviews it); `plan` is what routing would have made (targets and titles), shown
-- to the reviewer; release routes the stored event again as trusted.
CREATE TABLE quarantine_items (
  endpoint_id   text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id            text NOT NULL,
  event_id      text NOT NULL,
  webhook_id    text,
  actor         text,
  reason        text NOT NULL,
  rule_id       text,
  plan          jsonb NOT NULL DEFAULT '[]'::jsonb,
  state         text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'released', 'discarded', 'expired')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  resolved_at   timestamptz,
  resolved_by   text,
  resolution    text,
  todo_ids      text[] NOT NULL DEFAULT ARRAY[]::text[],
  PRIMARY KEY (endpoint_id, id)
);
CREATE INDEX quarantine_items_id_idx ON quarantine_items (id);
CREATE INDEX quarantine_items_held_idx ON quarantine_items (endpoint_id, created_at DESC) WHERE state = 'held';
CREATE INDEX quarantine_items_age_idx ON quarantine_items (created_at);

-- A delivery a rule dropped, quarantined or faulted made no todo, but its redelivery
-- must still answer duplicate: the dedup row then holds only the event.
ALTER TABLE webhook_deliveries ALTER COLUMN todo_id DROP NOT NULL;
