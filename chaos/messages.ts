// The session message queue under the same faults (docs/design/message-queue.md).
// Producers on one endpoint send_message into the live sessions of another endpoint of the
// same owner; half the consumer sessions hold their notification stream (messages arrive
// as notifications/claude/channel, with a next_message poll when idle), half only pull
// with next_message. Every delivery is acknowledged with ack_message, duplicates included.
//
// The contract is at-least-once until the ack, and the ack deletes the row: a message may
// be handed out again before its ack (stream lost, ack timeout), never after. So:
// - no message is acknowledged OK twice (a second OK ack means the row was back after its
//   ack: delivered again after its ack);
// - every message whose send was answered OK is acknowledged (OK, or an ack whose answer
//   was lost and whose row is gone), and no row is left in the consumers' queues;
// - every delivery carries the content that was sent under its id;
// - FIFO: per session, first deliveries of one producer's messages come in send order.
// A consumer session that answers 404 would have lost its queue (a purge): that is a
// violation too, since nothing in the suite ends a session.

import type { Pool } from '../src/db/pool.js';
import { ChaosClient, type Tally } from './client.js';
import type { Violation } from './todos.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface MessageLog {
  /** Sends answered OK: message id → token and target session. */
  sent: Map<string, { token: string; session: string }>;
  /** Tokens whose send answer was lost (they may or may not have been queued). */
  ambiguousSends: Set<string>;
  /** Per message id: the tokens its deliveries carried, and how. */
  delivered: Map<string, { tokens: Set<string>; count: number }>;
  /** Per session: message tokens in first-delivery order. */
  firstOrder: Map<string, string[]>;
  ackOk: Map<string, number>;
  ackAmbiguous: Set<string>;
  /** Deliveries of a message that arrived after this client's OK ack of it (raced a redelivery). */
  afterAck: number;
  viaStream: number;
  viaPull: number;
  queueFull: number;
  sessionsLost: string[];
}

export function newMessageLog(): MessageLog {
  return {
    sent: new Map(),
    ambiguousSends: new Set(),
    delivered: new Map(),
    firstOrder: new Map(),
    ackOk: new Map(),
    ackAmbiguous: new Set(),
    afterAck: 0,
    viaStream: 0,
    viaPull: 0,
    queueFull: 0,
    sessionsLost: [],
  };
}

interface Common {
  urls: () => string[];
  tally: Tally;
  log: MessageLog;
}

const TOKEN = /chaos-msg (\S+)/;

export class Consumer {
  readonly client: ChaosClient;
  private readonly inbox: Array<{ id: string; content: string; via: 'stream' | 'pull' }> = [];
  private readonly acked = new Set<string>();
  private lastDelivery = Date.now();
  private lostReported = false;

  constructor(
    private readonly index: number,
    credential: string,
    private readonly c: Common,
    readonly streaming: boolean,
  ) {
    this.client = new ChaosClient({
      urls: c.urls,
      credential,
      name: `chaos-consumer-${index}`,
      tally: c.tally,
      renewSession: false,
      // Messages are pushed only to sessions that declared the channel capability.
      channel: streaming,
    });
  }

  open(stop: () => boolean): Promise<boolean> {
    return this.client.open(stop);
  }

  get sessionId(): string {
    return this.client.sessionId ?? '';
  }

  async run(stop: () => boolean): Promise<void> {
    const stream = this.streaming
      ? this.client.holdStream(stop, (m) => {
          const params = m.params as { content?: string; meta?: Record<string, string> } | undefined;
          if (m.method !== 'notifications/claude/channel' || params?.meta?.kind !== 'message') return;
          this.inbox.push({ id: params.meta.message_id ?? '', content: params.content ?? '', via: 'stream' });
        })
      : Promise.resolve();
    while (!stop()) {
      if (this.client.sessionGone && !this.lostReported) {
        this.lostReported = true;
        this.c.log.sessionsLost.push(`${this.sessionId} (consumer ${this.index})`);
      }
      const next = this.inbox.shift();
      if (next) {
        await this.handle(next, stop);
        continue;
      }
      // Pull: always for pull consumers; for stream consumers only when the stream has been quiet a while.
      if (!this.streaming || Date.now() - this.lastDelivery > 3_000) {
        const r = await this.client.call('next_message', {});
        if (r.kind === 'ok' && r.value.message) {
          const m = r.value.message as { message_id: string; content: string };
          this.inbox.push({ id: m.message_id, content: m.content, via: 'pull' });
          continue;
        }
        if (this.streaming) this.lastDelivery = Date.now();
      }
      await sleep(this.streaming ? 50 : 100 + Math.random() * 100);
    }
    await stream;
    this.client.close();
  }

  private async handle(m: { id: string; content: string; via: 'stream' | 'pull' }, stop: () => boolean): Promise<void> {
    const log = this.c.log;
    this.lastDelivery = Date.now();
    if (m.via === 'stream') log.viaStream += 1;
    else log.viaPull += 1;
    const token = TOKEN.exec(m.content)?.[1] ?? `?${m.content.slice(0, 40)}`;
    const seen = log.delivered.get(m.id) ?? { tokens: new Set<string>(), count: 0 };
    if (seen.count === 0) {
      const order = log.firstOrder.get(this.sessionId) ?? [];
      order.push(token);
      log.firstOrder.set(this.sessionId, order);
    }
    seen.tokens.add(token);
    seen.count += 1;
    log.delivered.set(m.id, seen);
    if (this.acked.has(m.id)) log.afterAck += 1;
    let lost = false;
    for (let tries = 0; tries < 40 && !stop(); tries++) {
      const r = await this.client.call('ack_message', { message_id: m.id });
      if (r.kind === 'ok') {
        log.ackOk.set(m.id, (log.ackOk.get(m.id) ?? 0) + 1);
        this.acked.add(m.id);
        return;
      }
      if (r.kind === 'tool_error' && r.code === 'not_found') {
        if (lost) log.ackAmbiguous.add(m.id);
        return;
      }
      if (r.kind === 'lost' && r.reason === 'session_lost') return;
      lost = true;
      await sleep(50 + Math.random() * 100);
    }
    if (lost) log.ackAmbiguous.add(m.id);
  }
}

/** One producer: `count` messages round-robin over the targets, each retried until queued. */
export async function runProducer(
  index: number,
  credential: string,
  c: Common,
  targets: string[],
  count: number,
  stop: () => boolean,
): Promise<void> {
  const client = new ChaosClient({
    urls: c.urls,
    credential,
    name: `chaos-producer-${index}`,
    tally: c.tally,
    renewSession: true,
  });
  if (!(await client.open(stop))) return;
  for (let seq = 0; seq < count && !stop(); seq++) {
    const session = targets[(seq + index) % targets.length] ?? '';
    for (let attempt = 0; !stop(); attempt++) {
      const token = `p${index}-${String(seq).padStart(6, '0')}-${attempt}`;
      const r = await client.call('send_message', { session_id: session, content: `chaos-msg ${token}` });
      if (r.kind === 'ok') {
        const message = r.value.message as { id: string };
        c.log.sent.set(message.id, { token, session });
        break;
      }
      if (r.kind === 'tool_error' && r.code === 'queue_full') {
        c.log.queueFull += 1;
        attempt -= 1; // nothing was queued: the same token again
        await sleep(100 + Math.random() * 200);
        continue;
      }
      if (r.kind === 'lost' && r.refused) {
        attempt -= 1; // never reached a server: the same token again
      } else {
        // A lost answer, or `unavailable` (the connection was cut, maybe after the commit): it may be queued.
        c.log.ambiguousSends.add(token);
      }
      await sleep(50 + Math.random() * 100);
    }
    // A little pacing, so the queues fill and drain while the faults run rather than all at once.
    await sleep(Math.random() * 60);
  }
  client.close();
}

/** Messages still waiting for the consumers (rows of their sessions) and sends not yet acknowledged. */
export async function messagesOutstanding(
  pool: Pool,
  endpointId: string,
  log: MessageLog,
): Promise<{ rows: number; unacked: number }> {
  const res = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM queued_messages WHERE endpoint_id = $1`, [
    endpointId,
  ]);
  let unacked = 0;
  for (const id of log.sent.keys()) if (!log.ackOk.has(id) && !log.ackAmbiguous.has(id)) unacked += 1;
  return { rows: res.rows[0]?.n ?? -1, unacked };
}

function add(out: Violation[], check: string, rows: unknown[]): void {
  if (rows.length > 0) out.push({ check, detail: `${rows.length} case(s), e.g. ${JSON.stringify(rows.slice(0, 5))}` });
}

export async function checkMessages(
  pool: Pool,
  endpointId: string,
  log: MessageLog,
  expected: number,
): Promise<{ violations: Violation[]; facts: string[] }> {
  const out: Violation[] = [];
  const left = await pool.query<{
    id: string;
    session_id: string;
    reserved_in_flight: boolean;
    delivery_attempts: number;
  }>(`SELECT id::text, session_id, reserved_in_flight, delivery_attempts FROM queued_messages WHERE endpoint_id = $1`, [
    endpointId,
  ]);
  if (log.sent.size !== expected) {
    out.push({ check: 'every send answered OK', detail: `${log.sent.size} of ${expected} sends were answered OK` });
  }
  add(out, 'no row left in the consumers’ queues', left.rows);
  add(
    out,
    'no message acknowledged OK twice (delivered again after its ack)',
    [...log.ackOk].filter(([, n]) => n > 1),
  );
  // Lost: answered OK on send, never acknowledged, and not in the queue either.
  const queued = new Set(left.rows.map((r) => r.id));
  add(
    out,
    'every message sent OK was acknowledged or is still queued (none lost)',
    [...log.sent]
      .filter(([id]) => !log.ackOk.has(id) && !log.ackAmbiguous.has(id) && !queued.has(id))
      .map(([id, s]) => ({ id, ...s })),
  );
  const tokens = new Set<string>([...[...log.sent.values()].map((s) => s.token), ...log.ambiguousSends]);
  const sentTokens = new Set([...log.sent.values()].map((s) => s.token));
  add(
    out,
    'every delivery carries the content sent under its id',
    [...log.delivered]
      .filter(([id, d]) => {
        const sent = log.sent.get(id);
        if (sent) return d.tokens.size !== 1 || !d.tokens.has(sent.token);
        // Not answered OK: it must be a send whose answer was lost, and not a token answered OK under another id.
        return [...d.tokens].some((t) => !tokens.has(t) || sentTokens.has(t));
      })
      .map(([id, d]) => ({ id, tokens: [...d.tokens], sent: log.sent.get(id)?.token ?? null })),
  );
  add(out, 'no consumer session was lost (a purge would drop its queue)', log.sessionsLost);
  // FIFO per session and producer, over first deliveries (redelivery keeps the position).
  const inversions: string[] = [];
  for (const [session, order] of log.firstOrder) {
    const last = new Map<string, number>();
    for (const token of order) {
      const [producer, seq] = token.split('-');
      const n = Number(seq);
      if (!producer || Number.isNaN(n)) continue;
      if ((last.get(producer) ?? -1) > n) inversions.push(`${session}: ${producer} ${n} after ${last.get(producer)}`);
      last.set(producer, Math.max(n, last.get(producer) ?? -1));
    }
  }
  add(out, 'FIFO: one producer’s messages first reach a session in send order', inversions);
  const redelivered = [...log.delivered.values()].filter((d) => d.count > 1).length;
  const facts = [
    `messages: ${log.sent.size} sent OK (+${log.ambiguousSends.size} sends whose answer was lost), ` +
      `${log.ackOk.size} acknowledged OK, ${log.ackAmbiguous.size} with a lost ack answer, ` +
      `${redelivered} delivered more than once before the ack, ${log.afterAck} duplicates arrived after an OK ack ` +
      `(each refused as not_found), ${log.viaStream} deliveries by stream, ${log.viaPull} by next_message, ` +
      `${log.queueFull} queue_full answers`,
  ];
  return { violations: out, facts };
}
