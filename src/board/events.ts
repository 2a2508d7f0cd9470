// GET /board/events: the board's live stream (SSE), authenticated by the board cookie.
// It pushes the live fragment of one view (`queues`: the lanes; `endpoints`: the cards)
// whenever its HTML changes, and only ever renders the signed-in human's own endpoints.
// Triggers: the bus events about those endpoints (todo_ready on create, release, retry
// and requeue; board_changed on cancel; endpoint_revoked; session_closed) for a prompt
// push, and a poll every `pollMs`, because the claim path sends no NOTIFY (one per
// claim would take PostgreSQL's notify lock on every commit of the hot path). On the
// queues view the poll first reads a cheap fingerprint of the live rows and renders only
// when it moved (or the last render is stale). Rendering is serialised per stream and
// compared with the last push, so an idle board sends nothing. The poll re-checks the
// board session: signing out ends the stream.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { budgetsOfHuman } from '../budgets/board.js';
import { endpointCards, lanesFingerprint, ownedEndpointIds, queueLanes } from '../endpoints/board.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { withExtras } from './endpoint-extras.js';
import { endpointsFragment } from './endpoint-html.js';
import { boardCaller } from './guard.js';
import { lanesFragment } from './queue-html.js';
import { htmlText } from './html.js';
import type { BoardDeps } from './guard.js';
import type { Bus, BusEventType } from '../domain/events.js';

export interface EventDeps extends BoardDeps {
  bus: Bus;
  /** How often an open stream re-reads its view: the worst-case delay for a claim to show. */
  pollMs: number;
  log?: { warn(obj: object, msg: string): void };
}

const TRIGGERS = [
  'todo_ready',
  'board_changed',
  'endpoint_revoked',
  'session_closed',
] as const satisfies BusEventType[];
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;
/** Re-render at least this often even when the fingerprint holds: ages and lease countdowns move. */
const STALE_MS = 30_000;

type View = 'queues' | 'endpoints';

/** One open stream: its triggers, timers and the last fragment it sent. */
class BoardStream {
  private last = '';
  private fingerprint = '';
  private renderedAt = 0;
  private running = false;
  private again = false;
  private polling = false;
  private ended = false;
  private readonly stops: Array<() => void> = [];

  constructor(
    private readonly deps: EventDeps,
    private readonly session: BoardSession,
    private readonly request: FastifyRequest,
    private readonly view: View,
    private readonly reply: FastifyReply,
    private owned: Set<string>,
  ) {}

  start(onEnd: () => void): void {
    this.reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
    });
    this.reply.raw.write('retry: 2000\n\n');
    for (const type of TRIGGERS) {
      const off = this.deps.bus.subscribe(type, (event) => {
        if (this.owned.has(event.endpoint_id)) void this.refresh();
      });
      if (off) this.stops.push(off);
    }
    const poll = setInterval(() => void this.poll(), this.deps.pollMs);
    const keepalive = setInterval(() => this.reply.raw.write(': keepalive\n\n'), KEEPALIVE_MS);
    this.stops.push(
      () => clearInterval(poll),
      () => clearInterval(keepalive),
      onEnd,
    );
    this.reply.raw.on('close', () => this.end());
    void this.refresh();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.stops.forEach((stop) => stop());
    this.reply.raw.end();
  }

  private async render(): Promise<string> {
    const humanId = this.session.principal.human.id;
    const now = this.deps.now();
    if (this.view === 'queues') {
      const [lanes, budgets] = await Promise.all([
        queueLanes(this.deps.operator, humanId, now),
        budgetsOfHuman(this.deps.operator, humanId),
      ]);
      return htmlText(lanesFragment(lanes, now, budgets));
    }
    const views = await withExtras(this.deps.operator.db, await endpointCards(this.deps.operator, humanId, now));
    return htmlText(endpointsFragment(views, this.session.csrf, now));
  }

  private async refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        this.renderedAt = Date.now();
        const fragment = await this.render();
        if (!this.ended && fragment !== this.last) {
          this.last = fragment;
          const data = fragment.split('\n').map((line) => `data: ${line}\n`);
          this.reply.raw.write(`event: fragment\n${data.join('')}\n`);
        }
      } while (this.again && !this.ended);
    } catch (err) {
      this.deps.log?.warn({ err }, 'board stream render failed');
    } finally {
      this.running = false;
    }
  }

  private async poll(): Promise<void> {
    // A poll slower than the interval (a large table) is not stacked on: the tick is skipped.
    if (this.polling || this.ended) return;
    this.polling = true;
    try {
      if (!(await boardCaller(this.deps.identity, this.request))) return this.end();
      this.owned = await ownedEndpointIds(this.deps.operator, this.session.principal.human.id, this.deps.now());
      if (this.view === 'queues') {
        // Budgets move without a lane moving (a window rolls over, a policy is edited).
        const [lanes, budgets] = await Promise.all([
          lanesFingerprint(this.deps.operator, this.owned),
          budgetsOfHuman(this.deps.operator, this.session.principal.human.id),
        ]);
        const fingerprint = `${lanes}|${JSON.stringify([...budgets])}`;
        const stale = Date.now() - this.renderedAt >= STALE_MS;
        if (fingerprint === this.fingerprint && !stale) return;
        this.fingerprint = fingerprint;
      }
      await this.refresh();
    } catch (err) {
      this.deps.log?.warn({ err }, 'board stream poll failed');
    } finally {
      this.polling = false;
    }
  }
}

export function eventRoutes(app: FastifyInstance, deps: EventDeps): void {
  const open = new Set<BoardStream>();
  app.addHook('preClose', async () => [...open].forEach((stream) => stream.end()));

  app.get<{ Querystring: { view?: string } }>('/board/events', async (request, reply) => {
    const session = await boardCaller(deps.identity, request);
    if (!session) return reply.status(401).type('text/plain; charset=utf-8').send('sign in first');
    const view: View = request.query.view === 'endpoints' ? 'endpoints' : 'queues';
    const owned = await ownedEndpointIds(deps.operator, session.principal.human.id, deps.now());
    reply.hijack();
    const stream = new BoardStream(deps, session, request, view, reply, owned);
    open.add(stream);
    stream.start(() => open.delete(stream));
  });
}
