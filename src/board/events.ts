// GET /board/events: the board's live stream (SSE), authenticated by the board cookie.
// It pushes the live fragment of one view (`queues`: the lanes; `endpoints`: the cards)
// whenever its HTML changes. Triggers: the bus events about the human's own endpoints
// (todo_ready on create/release/retry/requeue, board_changed, endpoint_revoked,
// session_closed) for a prompt push, and a poll every `pollMs`, because the claim path
// sends no NOTIFY (a NOTIFY per claim would serialise every commit on the hot path).
// Rendering is serialised per stream and compared with the last push, so an idle board
// costs one small read per poll and sends nothing. The session is re-checked on every
// poll: signing out ends the stream.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { endpointCards, ownedEndpointIds, queueLanes } from '../endpoints/board.js';
import { boardSession, type BoardSession } from '../identity/board-sessions.js';
import { endpointsFragment } from './endpoint-html.js';
import { SESSION_COOKIE } from './guard.js';
import { lanesFragment } from './queue-html.js';
import type { BoardDeps } from './queues.js';

export interface BoardBus {
  subscribe(type: string, handler: (event: { [key: string]: unknown }) => void): () => void;
}

export interface EventDeps extends BoardDeps {
  bus?: BoardBus;
  /** How often an open stream re-reads its view: the worst-case delay for a claim to show. */
  pollMs: number;
  log?: { warn(obj: object, msg: string): void };
}

const TRIGGERS = ['todo_ready', 'board_changed', 'endpoint_revoked', 'session_closed'];
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

type View = 'queues' | 'endpoints';

function renderer(deps: EventDeps, session: BoardSession, view: View) {
  const humanId = session.principal.human.id;
  return async (): Promise<string> => {
    const now = deps.now();
    if (view === 'queues') return lanesFragment(await queueLanes(deps.operator, humanId, now), now);
    return endpointsFragment(await endpointCards(deps.operator, humanId, now), session.csrf, now);
  };
}

function sse(reply: FastifyReply, event: string, data: string): void {
  reply.raw.write(
    `event: ${event}\n${data
      .split('\n')
      .map((line) => `data: ${line}\n`)
      .join('')}\n`,
  );
}

export function eventRoutes(app: FastifyInstance, deps: EventDeps): void {
  const open = new Set<() => void>();
  app.addHook('preClose', async () => [...open].forEach((end) => end()));

  app.get<{ Querystring: { view?: string } }>('/board/events', async (request, reply) => {
    const cookie = request.cookies[SESSION_COOKIE];
    const session = await boardSession(deps.identity, cookie);
    if (!session) return reply.status(401).type('text/plain; charset=utf-8').send('sign in first');
    const view: View = request.query.view === 'endpoints' ? 'endpoints' : 'queues';
    const render = renderer(deps, session, view);
    let owned = await ownedEndpointIds(deps.operator, session.principal.human.id, deps.now());

    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
    });
    reply.raw.write('retry: 2000\n\n');

    let last = '';
    let running = false;
    let again = false;
    let ended = false;
    const refresh = async (): Promise<void> => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          const fragment = await render();
          if (!ended && fragment !== last) {
            last = fragment;
            sse(reply, 'fragment', fragment);
          }
        } while (again && !ended);
      } catch (err) {
        deps.log?.warn({ err }, 'board stream render failed');
      } finally {
        running = false;
      }
    };
    const poll = async () => {
      if (!(await boardSession(deps.identity, cookie))) return end();
      owned = await ownedEndpointIds(deps.operator, session.principal.human.id, deps.now());
      await refresh();
    };
    const unsubscribe = TRIGGERS.map((type) =>
      deps.bus?.subscribe(type, (event) => {
        if (typeof event.endpoint_id === 'string' && owned.has(event.endpoint_id)) void refresh();
      }),
    );
    const pollTimer = setInterval(() => void poll().catch(() => undefined), deps.pollMs);
    const keepalive = setInterval(() => reply.raw.write(': keepalive\n\n'), KEEPALIVE_MS);
    function end(): void {
      if (ended) return;
      ended = true;
      open.delete(end);
      clearInterval(pollTimer);
      clearInterval(keepalive);
      unsubscribe.forEach((u) => u?.());
      reply.raw.end();
    }
    open.add(end);
    reply.raw.on('close', end);
    await refresh();
  });
}
