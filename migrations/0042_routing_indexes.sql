-- 0042: the dry run's "last N deliveries" of one webhook (docs/design/routing.md, "The
-- dry run"; recentWebhookEvents in src/store/webhook-events.ts).
--
-- webhook_events_recent_idx is per endpoint: for a webhook that shares its endpoint with
-- busier ones it walks every newer event of the others before it finds this one's, and
-- for a quiet webhook the planner chose a sequential scan of the whole table (200,000
-- events: 3,539 buffers, 51 ms). Keyed by (endpoint_id, webhook_id) in the order the
-- query reads, a dry run reads the N rows it answers and no others (4 buffers). Partial
-- on replay_of IS NULL, as the query is: replays are not deliveries.
CREATE INDEX webhook_events_webhook_idx ON webhook_events (endpoint_id, webhook_id, received_at DESC, id DESC)
  WHERE replay_of IS NULL;
