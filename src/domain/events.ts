// The events instances tell each other over LISTEN/NOTIFY (db/bus.ts), declared once: every
// publisher (the store's pg_notify calls, through db/bus.ts notifySql and eventPayload)
// and every subscriber is typed by this union. Pure types, so surfaces that subscribe
// (the board's live updates, the WebSocket hub, the MCP session registry) need no db/.

/**
 * Every event on the bus, by type, with its payload: the one closed list of what
 * instances tell each other. Payloads carry identifiers only (NOTIFY payloads stay far
 * below PostgreSQL's 8,000-byte limit), except `ring`, which forwards a ring to the
 * instance holding the session's stream.
 */
export interface BusEvents {
  /** Work became ready on a queue (created, requeued), or its budget admits again (`reopen`). */
  todo_ready: { endpoint_id: string; queue: string; reopen?: boolean };
  /**
   * A todo was created scheduled: it becomes ready at `not_before` (RFC 3339), when one
   * instance's promotion pass announces it with todo_ready. Every instance re-arms its
   * promotion timer for the instant.
   */
  todo_scheduled: { endpoint_id: string; not_before: string };
  /** A todo of the endpoint changed without becoming ready (boards re-render). */
  board_changed: { endpoint_id: string };
  /** A ring for a stream on `instance`: that instance writes it. */
  ring: { instance: string; endpoint_id: string; session_id: string; params: unknown; ring?: unknown };
  /** A session's message queue changed; `deliver: false` tells boards only, not the pump. */
  message_ready: { endpoint_id: string; session_id: string; deliver?: boolean };
  /** A session ended (DELETE, idle expiry, eviction at the cap): its streams and transports go. */
  session_closed: { endpoint_id: string; session_id: string };
  /**
   * An endpoint was revoked, or its owner disabled (docs/design/people.md): its
   * credential answers, sessions, streams and waits go at once.
   */
  endpoint_revoked: { endpoint_id: string };
  /**
   * An endpoint's credential was rotated or its settings changed: every instance drops
   * the answers it reuses for the endpoint, so a replaced credential whose grace is 0
   * stops at once everywhere and a granted queue is claimable at once.
   */
  endpoint_changed: { endpoint_id: string };
  /** A human was disabled or deleted: every instance closes the board connections (/ws) it holds for them. */
  human_disabled: { human_id: string };
  /**
   * One or more of the human's board sessions ended (sign-out, password change, reset
   * link spent): every instance re-checks the session of each /ws connection it holds for
   * them and closes those whose session is gone.
   */
  board_sessions_ended: { human_id: string };
  /** An install-wide setting was saved (persist before apply, on every instance). */
  settings_changed: { key: string; version: number };
  /** A doorbell self-test started: the instance holding the stream rings it. */
  doorbell_test: { endpoint_id: string; test_id: string };
  /**
   * A hand-off child with `reply` ended (docs/design/handoff.md, "Reply"): its outbox row
   * is due; any instance delivers it. `endpoint_id` is the child's endpoint.
   */
  handoff_reply: { endpoint_id: string };
  /** An endpoint's presence changed to `in`: its digest is owed. */
  presence_in: { endpoint_id: string };
}

export type BusEventType = keyof BusEvents;
export type BusEvent<T extends BusEventType = BusEventType> = { [K in T]: { type: K } & BusEvents[K] }[T];

/** What subscribers hold: subscribe by type, and hear when the connection came back. */
export interface Bus {
  subscribe<T extends BusEventType>(type: T, handler: (event: BusEvent<T>) => void): () => void;
  onReconnect(handler: () => void): () => void;
}
