-- 0037: provider webhooks and their event history (docs/design/intake.md).
--
-- webhooks.provider says how a delivery is verified and read: `token` (the URL is the
-- only credential, as before), or a provider whose signature is checked on the raw body.
-- A signed webhook holds its signing secret as issued (the verifier needs the secret
-- itself, not a hash); prev_secret verifies beside it until prev_secret_expires_at, the
-- rotation grace. Existing rows become `token` webhooks with no secret.
ALTER TABLE webhooks
  ADD COLUMN provider text NOT NULL DEFAULT 'token'
    CHECK (provider IN ('token', 'github', 'gitlab', 'gitea', 'stripe', 'slack', 'standard')),
  ADD COLUMN secret text,
  ADD COLUMN prev_secret text,
  ADD COLUMN prev_secret_expires_at timestamptz,
  ADD CONSTRAINT webhooks_secret_when_signed CHECK ((provider = 'token') = (secret IS NULL));

-- One row per accepted delivery (and per replay of one), committed in the transaction
-- that made its todos. Keyed by endpoint like every tenant table; the id index serves
-- GET /api/v1/events/{id} (ownership is checked through the endpoint), the
-- (endpoint_id, received_at) index the per-endpoint list and the cap's trim, and the
-- received_at index the retention sweep. webhook_id goes null when the webhook is
-- deleted: what arrived stays in the history until retention.
CREATE TABLE webhook_events (
  endpoint_id   text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  id            text NOT NULL,
  webhook_id    text,
  provider      text NOT NULL,
  queue         text NOT NULL,
  event_type    text,
  delivery_id   text,
  actor         text,
  verified      boolean NOT NULL,
  content_type  text,
  headers       jsonb NOT NULL DEFAULT '{}'::jsonb,
  payload       jsonb,
  disposition   text NOT NULL DEFAULT 'routed'
    CHECK (disposition IN ('routed', 'duplicate', 'dropped', 'quarantined', 'faulted')),
  todo_ids      text[] NOT NULL DEFAULT ARRAY[]::text[],
  trace         jsonb NOT NULL DEFAULT '[]'::jsonb,
  replay_of     text,
  received_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, id),
  FOREIGN KEY (endpoint_id, webhook_id) REFERENCES webhooks (endpoint_id, id) ON DELETE SET NULL (webhook_id)
);
CREATE INDEX webhook_events_id_idx ON webhook_events (id);
CREATE INDEX webhook_events_recent_idx ON webhook_events (endpoint_id, received_at DESC, id DESC);
CREATE INDEX webhook_events_age_idx ON webhook_events (received_at);

-- A redelivery answers with the event its first delivery made. Nullable: ids recorded
-- before this migration have no event.
ALTER TABLE webhook_deliveries ADD COLUMN event_id text;

-- The event a todo came from. Never searched (the event lists its todos), so no index;
-- a nullable column with no default rewrites nothing.
ALTER TABLE todos ADD COLUMN event_id text;
