// The LISTEN/NOTIFY bus: one dedicated connection LISTENing on one channel, fanning
// events out to in-process subscribers by `type`. A notification is a latency hint,
// never the record: when the connection drops, the bus reconnects with capped backoff
// and then tells every subscriber to re-poll, because anything sent meanwhile is lost.
// Publishing happens in store/ (pg_notify inside the writing transaction, so it fires
// only on commit); this module only listens.

import type pg from 'pg';
import { Hosts, connectClient } from './connect.js';
import type { Bus, BusEvent, BusEvents, BusEventType } from '../domain/events.js';

export const CHANNEL = 'switchboard';

export type { Bus, BusEvent, BusEvents, BusEventType } from '../domain/events.js';

/** The fields each event must carry as strings; a payload without them is dropped, never handed on. */
const REQUIRED: { [K in BusEventType]: Array<keyof BusEvents[K] & string> } = {
  todo_ready: ['endpoint_id', 'queue'],
  todo_scheduled: ['endpoint_id', 'not_before'],
  board_changed: ['endpoint_id'],
  ring: ['instance', 'endpoint_id', 'session_id'],
  message_ready: ['endpoint_id', 'session_id'],
  session_closed: ['endpoint_id', 'session_id'],
  endpoint_revoked: ['endpoint_id'],
  endpoint_changed: ['endpoint_id'],
  human_disabled: ['human_id'],
  board_sessions_ended: ['human_id'],
  settings_changed: ['key'],
  doorbell_test: ['endpoint_id', 'test_id'],
  presence_in: ['endpoint_id'],
  handoff_reply: ['endpoint_id'],
};

/** A NOTIFY payload as an event of the union, or null when it is not one. */
export function decodeEvent(payload: string | undefined): BusEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(payload ?? '');
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const event = value as Record<string, unknown>;
  const type = event.type;
  if (typeof type !== 'string' || !Object.hasOwn(REQUIRED, type)) return null;
  const fields: string[] = REQUIRED[type as BusEventType];
  return fields.every((f) => typeof event[f] === 'string') ? (event as BusEvent) : null;
}

/**
 * SQL: the pg_notify call that publishes one event, with each payload field given as a SQL
 * expression (a column, a parameter with its cast, a literal). The event's type and field
 * names type-check against BusEvents, so a publisher cannot drift from its subscribers.
 */
export function notifySql<T extends BusEventType>(type: T, fields: { [K in keyof BusEvents[T]]: string }): string {
  const pairs = Object.entries(fields as Record<string, string>).map(([key, sql]) => `'${key}', ${sql}`);
  return `pg_notify('${CHANNEL}', json_build_object('type', '${type}', ${pairs.join(', ')})::text)`;
}

/** A payload for pg_notify($1, $2) from application code (a ring's params, a message notice). */
export function eventPayload<T extends BusEventType>(type: T, fields: BusEvents[T]): string {
  return JSON.stringify({ type, ...fields });
}

export interface BusOptions {
  url: string;
  log?: (level: 'info' | 'warn', message: string) => void;
  /** Per host of the URL, in ms (SWITCHBOARD_DB_CONNECT_TIMEOUT; ./connect.ts's default). */
  connectTimeoutMs?: number;
  /** First retry delay and its cap: quick to recover a blip, gentle on a down database. */
  backoff?: { initialMs: number; maxMs: number };
}

type Handler = (event: BusEvent) => void;

export class NotifyBus implements Bus {
  private client: pg.Client | null = null;
  private readonly handlers = new Map<BusEventType, Set<Handler>>();
  private readonly repollers = new Set<() => void>();
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private delayMs: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly log: NonNullable<BusOptions['log']>;
  private readonly hosts: Hosts;
  /** Completed connections, for tests and readiness: 1 after start, +1 per reconnect. */
  connections = 0;

  constructor(private readonly options: BusOptions) {
    this.backoff = options.backoff ?? { initialMs: 100, maxMs: 5_000 };
    this.delayMs = this.backoff.initialMs;
    this.log = options.log ?? (() => undefined);
    this.hosts = Hosts.forWriting(options.url, options.connectTimeoutMs);
  }

  /** Resolves once LISTEN is in place; rejects if the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  subscribe<T extends BusEventType>(type: T, handler: (event: BusEvent<T>) => void): () => void {
    const set = this.handlers.get(type) ?? new Set<Handler>();
    const h = handler as unknown as Handler;
    set.add(h);
    this.handlers.set(type, set);
    return () => set.delete(h);
  }

  /** Called after every reconnect: whatever was notified while down must be re-polled. */
  onReconnect(handler: () => void): () => void {
    this.repollers.add(handler);
    return () => this.repollers.delete(handler);
  }

  get listening(): boolean {
    return this.client !== null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    // Several hosts: the first that gives a read-write session (notifications are only
    // delivered on the server that committed them, and a standby refuses LISTEN).
    const client = await connectClient(this.hosts, { application_name: 'switchboard-listen' });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => this.dispatch(msg.payload));
    try {
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopped) {
      await client.end();
      return;
    }
    this.client = client;
    this.connections += 1;
    this.delayMs = this.backoff.initialMs;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.stopped) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.log('warn', 'LISTEN connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.backoff.maxMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().then(
        () => {
          if (this.stopped) return;
          this.log('info', 'LISTEN connection restored; subscribers re-poll');
          for (const repoll of this.repollers) repoll();
        },
        () => this.scheduleReconnect(),
      );
    }, delay);
  }

  private dispatch(payload: string | undefined): void {
    const event = decodeEvent(payload);
    if (!event) return;
    for (const handler of this.handlers.get(event.type) ?? []) {
      try {
        handler(event);
      } catch (err) {
        this.log('warn', `bus subscriber for ${event.type} threw: ${(err as Error).message}`);
      }
    }
  }
}
