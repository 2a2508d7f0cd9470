// The harness for the message queue's HTTP surfaces: the real app with a bus and a
// capacity setting of its own (optionally environment-locked), so several
// "instances" can share one database; people made through the real routes; and a
// WebSocket client for /ws signed in with a real board session cookie.

import assert from 'node:assert/strict';
import { after } from 'node:test';
import { pino } from 'pino';
import WebSocket from 'ws';
import { NotifyBus } from '../../src/db/bus.js';
import type { Pool } from '../../src/db/pool.js';
import { signIn } from '../../src/identity/board-sessions.js';
import type { Principal } from '../../src/identity/principal.js';
import type { MessageDeps } from '../../src/messages/context.js';
import type { Metrics } from '../../src/metrics/index.js';
import { Harness, PASSWORD, PUBLIC_URL } from '../api/app.js';

export interface InstanceOptions {
  envCapacity?: number | null;
  syntheticAdmin?: Principal | null;
  warnings?: string[];
  /** Frames per /ws connection (SWITCHBOARD_WS_RATE / _BURST); the defaults when unset. */
  socketLimit?: { perSecond: number; burst: number };
}

/** One app of its own on the shared database, with its own bus and capacity setting. */
export class MessageHarness extends Harness {
  get messages(): MessageDeps {
    return this.services.messages;
  }

  get metrics(): Metrics {
    return this.services.metrics;
  }
}

export async function instance(pool: Pool, url: string, options: InstanceOptions = {}): Promise<MessageHarness> {
  const bus = new NotifyBus({ url });
  await bus.start();
  after(() => bus.stop());
  // The capacity setting's warnings are what a `serve` log would show.
  const log = pino(
    { level: 'warn' },
    { write: (line: string) => void options.warnings?.push((JSON.parse(line) as { msg: string }).msg) },
  );
  const h = await new MessageHarness(pool).init({
    bus,
    log,
    syntheticAdmin: options.syntheticAdmin ?? null,
    config: (c) => ({
      ...c,
      messages: { ...c.messages, envCapacity: options.envCapacity ?? null },
      api: { ...c.api, perSocket: options.socketLimit ?? c.api.perSocket },
    }),
  });
  after(h.messages.capacity.listen(bus));
  after(() => h.close());
  return h;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- socket answers are checked field by field
export type Body = any;

export interface WsClient {
  request(action: string, payload: unknown): Promise<{ type: string; payload: Body }>;
  /** Sends a frame as given (its `id` must be a number not used by request()). */
  raw(frame: { id: number } & Record<string, unknown>): Promise<{ type: string; payload: Body }>;
  statuses: Body[];
  close(): void;
}

/** A board cookie for a human made by makePeople. */
export async function boardCookie(pool: Pool, email: string): Promise<string> {
  return (await signIn({ db: pool, publicUrl: PUBLIC_URL }, email, PASSWORD)).cookie;
}

/** Opens /ws on a listening app; the status notifications it receives are collected. */
export async function wsClient(base: string, headers: Record<string, string>): Promise<WsClient> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws`, { headers });
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('error', reject);
    socket.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  after(() => socket.close());
  const waiting = new Map<number, (answer: Body) => void>();
  const statuses: Body[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    if (message.type === 'notification') statuses.push(message);
    else waiting.get(message.id)?.(message);
  });
  let next = 1;
  return {
    statuses,
    close: () => socket.close(),
    raw(frame) {
      socket.send(JSON.stringify(frame));
      return new Promise((resolve) => waiting.set(frame.id, resolve));
    },
    request(action, payload) {
      const id = next++;
      socket.send(JSON.stringify({ id, type: 'request', action, payload }));
      return new Promise((resolve) => waiting.set(id, resolve));
    },
  };
}

/** Starts the harness's app on a free loopback port; its base URL. */
export async function listening(h: Harness): Promise<string> {
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  return `http://127.0.0.1:${address.port}`;
}
