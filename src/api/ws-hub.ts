// Who hears `message.queue.status_changed`: the /ws connections of this instance that
// subscribed to a session (by `message.queue.get`). On `message_ready` from any instance
// (every successful mutation announces one on commit) the hub reads the session's status
// once and sends it to that session's subscribers here; when the session ends, they get
// its empty queue once more and are unsubscribed.

import type { MessageDeps } from '../messages/context.js';
import { statusOf } from '../messages/queue.js';
import type { Bus } from '../domain/events.js';

export interface Socket {
  send(data: string): void;
  readonly readyState: number;
}

const OPEN = 1;

export class StatusHub {
  private readonly subscribers = new Map<string, { endpointId: string; sockets: Set<Socket> }>();
  private readonly offs: Array<() => void> = [];

  constructor(
    private readonly messages: MessageDeps,
    bus?: Bus,
  ) {
    if (!bus) return;
    this.offs.push(
      bus.subscribe('message_ready', (e) => {
        void this.publish(e.session_id);
      }),
      bus.subscribe('session_closed', (e) => {
        this.closed(e.session_id);
      }),
    );
  }

  subscribe(socket: Socket, ref: { endpointId: string; sessionId: string }): void {
    const entry = this.subscribers.get(ref.sessionId) ?? { endpointId: ref.endpointId, sockets: new Set<Socket>() };
    entry.sockets.add(socket);
    this.subscribers.set(ref.sessionId, entry);
  }

  drop(socket: Socket): void {
    for (const [sessionId, entry] of this.subscribers) {
      entry.sockets.delete(socket);
      if (entry.sockets.size === 0) this.subscribers.delete(sessionId);
    }
  }

  stop(): void {
    this.offs.forEach((off) => off());
    this.subscribers.clear();
  }

  private async publish(sessionId: string): Promise<void> {
    const entry = this.subscribers.get(sessionId);
    if (!entry) return;
    try {
      const status = await statusOf(this.messages, { endpointId: entry.endpointId, sessionId });
      this.send(entry.sockets, status);
    } catch {
      // A status that cannot be read now is sent with the next change; the board refetches anyway.
    }
  }

  private closed(sessionId: string): void {
    const entry = this.subscribers.get(sessionId);
    if (!entry) return;
    this.subscribers.delete(sessionId);
    this.send(entry.sockets, { session_id: sessionId, entries: [], count: 0, closed: true });
  }

  private send(sockets: Set<Socket>, payload: object): void {
    const text = JSON.stringify({ type: 'notification', action: 'message.queue.status_changed', payload });
    for (const socket of sockets) if (socket.readyState === OPEN) socket.send(text);
  }
}
