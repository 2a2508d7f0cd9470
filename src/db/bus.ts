// The LISTEN/NOTIFY bus: one dedicated connection LISTENing on one channel, fanning
// events out to in-process subscribers by `type`. A notification is a latency hint,
// never the record: when the connection drops, the bus reconnects with capped backoff
// and then tells every subscriber to re-poll, because anything sent meanwhile is lost.
// Publishing happens in store/ (pg_notify inside the writing transaction, so it fires
// only on commit); this module only listens.

import pg from 'pg';

export const CHANNEL = 'switchboard';

export interface BusEvent {
  type: string;
  [key: string]: unknown;
}

export interface BusOptions {
  url: string;
  log?: (level: 'info' | 'warn', message: string) => void;
  /** First retry delay and its cap: quick to recover a blip, gentle on a down database. */
  backoff?: { initialMs: number; maxMs: number };
}

type Handler = (event: BusEvent) => void;

export class NotifyBus {
  private client: pg.Client | null = null;
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly repollers = new Set<() => void>();
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private delayMs: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly log: NonNullable<BusOptions['log']>;
  /** Completed connections, for tests and readiness: 1 after start, +1 per reconnect. */
  connections = 0;

  constructor(private readonly options: BusOptions) {
    this.backoff = options.backoff ?? { initialMs: 100, maxMs: 5_000 };
    this.delayMs = this.backoff.initialMs;
    this.log = options.log ?? (() => undefined);
  }

  /** Resolves once LISTEN is in place; rejects if the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  subscribe(type: string, handler: Handler): () => void {
    const set = this.handlers.get(type) ?? new Set<Handler>();
    set.add(handler);
    this.handlers.set(type, set);
    return () => set.delete(handler);
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
    const client = new pg.Client({ connectionString: this.options.url, application_name: 'switchboard-listen' });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => this.dispatch(msg.payload));
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
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
    let event: BusEvent;
    try {
      event = JSON.parse(payload ?? '') as BusEvent;
    } catch {
      return;
    }
    for (const handler of this.handlers.get(event.type) ?? []) {
      try {
        handler(event);
      } catch (err) {
        this.log('warn', `bus subscriber for ${event.type} threw: ${(err as Error).message}`);
      }
    }
  }
}
