// The auto-run delivery of session messages. Every instance hears `message_ready`; the
// reservation only succeeds on the instance whose row says it holds the session's open
// stream, and that instance writes the message there. One session's attempts run one at
// a time in this process; across processes the session's lock row and the one-in-flight
// rule keep a message from being handed out twice before its ack or its return.
//
// A failed write returns the message to pending quietly (no new notice, so a deaf
// stream is not hammered); a stream that closes or reopens returns whatever was in
// flight on it; the sweep returns reservations past the ack timeout and nudges sessions
// a lost notice left waiting.

import type { Logger } from 'pino';
import type { ChannelParams } from '../doorbell/content.js';
import type { SessionRef } from '../store/messages.js';
import type { MessageDeps } from './context.js';
import {
  countDelivery,
  messageParams,
  reservationOf,
  reserveNext,
  returnSessionToPending,
  returnToPending,
} from './delivery.js';
import type { Bus } from '../domain/events.js';

export interface StreamWriter {
  /** Writes the notification to this instance's stream of the session; false when it cannot. */
  ring(sessionId: string, params: ChannelParams): Promise<boolean>;
}

export interface PumpDeps {
  messages: MessageDeps;
  instanceId: string;
  log: Pick<Logger, 'debug' | 'error'>;
  writer: StreamWriter;
}

export class MessagePump {
  private readonly chains = new Map<string, Promise<void>>();
  /** Messages this instance wrote to a stream, for tests. */
  written = 0;

  constructor(private readonly deps: PumpDeps) {}

  listen(bus: Bus): () => void {
    return bus.subscribe('message_ready', (e) => {
      if (e.deliver !== false) void this.kick({ endpointId: e.endpoint_id, sessionId: e.session_id });
    });
  }

  /** Delivers the session's head if its stream is here and nothing is in flight. */
  kick(ref: SessionRef): Promise<void> {
    return this.serial(ref, () => this.deliver(ref));
  }

  /** A stream opened here: what was in flight on an earlier stream comes again, then the head. */
  attached(ref: SessionRef): Promise<void> {
    return this.serial(ref, async () => {
      await returnSessionToPending(this.deps.messages, ref);
      await this.deliver(ref);
    });
  }

  /** The session's stream closed here: what was in flight on it goes back to pending. */
  detached(ref: SessionRef): Promise<void> {
    return this.serial(ref, async () => {
      await returnSessionToPending(this.deps.messages, ref, this.deps.instanceId);
    });
  }

  /** Waits for every step in flight (shutdown: streams closed, their messages returned). */
  async settle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  private async deliver(ref: SessionRef): Promise<void> {
    const message = await reserveNext(this.deps.messages, ref, this.deps.instanceId);
    if (!message) return;
    let ok = false;
    try {
      ok = await this.deps.writer.ring(ref.sessionId, messageParams(message));
    } catch (err) {
      this.deps.log.debug({ err, session: ref.sessionId }, 'message write failed');
    }
    if (ok) {
      this.written += 1;
      countDelivery(this.deps.messages, message);
      return;
    }
    await returnToPending(this.deps.messages, reservationOf(message), false);
  }

  /** Runs one session's steps in order in this process; errors are logged, never thrown. */
  private serial(ref: SessionRef, step: () => Promise<void>): Promise<void> {
    const key = `${ref.endpointId}\u0000${ref.sessionId}`;
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(step)
      .catch((err: unknown) => this.deps.log.error({ err, session: ref.sessionId }, 'message delivery step failed'));
    this.chains.set(key, next);
    void next.finally(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
    return next;
  }
}
