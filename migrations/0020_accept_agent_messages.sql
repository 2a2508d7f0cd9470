-- Agent-to-agent messages are opt-in per target endpoint (docs/design/message-queue.md,
-- "Agent messages"): send_message from another endpoint reaches this endpoint's sessions
-- only when its owner turned this on. False for every endpoint, old and new: an agent's
-- sessions take orders from other agents only after a human said so.
ALTER TABLE endpoints ADD COLUMN accept_agent_messages boolean NOT NULL DEFAULT false;
