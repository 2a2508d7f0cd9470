// What the board shows a human: their endpoints with each queue's lanes (counts and the
// newest cards), and their endpoints with live sessions. Scoped by the owning human like
// every other operator read; another human's endpoints never appear.

import { notFound } from '../domain/errors.js';
import { LANES, laneCards, laneCounts, liveFingerprint, type Lane, type LaneCard } from '../store/board-lanes.js';
import { sessionActivity } from '../store/session-activity.js';
import { listLiveSessions, type McpSession } from '../store/sessions.js';
import { chartKey, LAST_HOUR, queueCharts, type QueueChart } from './charts.js';
import { listEndpoints, showEndpoint, type EndpointDeps, type EndpointView } from './manage.js';

export { LANES, type Lane, type LaneCard };

/** Cards shown per lane: enough to see what moves, few enough to render every second. */
export const CARDS_PER_LANE = 20;

export interface QueueLanes {
  queue: string;
  lanes: Array<{ lane: Lane; count: number; cards: LaneCard[] }>;
  /** The last hour of its rollups (docs/design/queue-rollups.md). */
  chart?: QueueChart;
}

export interface EndpointLanes {
  endpoint: EndpointView;
  queues: QueueLanes[];
}

/** Active endpoints of this human, each granted queue with its four lanes and its last hour's chart. */
export async function queueLanes(deps: EndpointDeps, humanId: string, now: Date): Promise<EndpointLanes[]> {
  const endpoints = (await listEndpoints(deps, humanId, now)).filter((e) => e.state === 'active');
  const ids = endpoints.map((e) => e.id);
  if (ids.length === 0) return [];
  const queues = endpoints.flatMap((e) => e.queues.map((queue) => ({ endpointId: e.id, queue })));
  const [counts, cards, charts] = await Promise.all([
    laneCounts(deps.db, ids),
    laneCards(deps.db, queues, CARDS_PER_LANE),
    queueCharts(deps, queues, LAST_HOUR, now),
  ]);
  return endpoints.map((endpoint) => ({
    endpoint,
    queues: endpoint.queues.map((queue) => ({
      queue,
      lanes: LANES.map((lane) => ({
        lane,
        count: counts.find((c) => c.endpoint_id === endpoint.id && c.queue === queue && c.lane === lane)?.count ?? 0,
        cards: cards.filter((c) => c.endpoint_id === endpoint.id && c.queue === queue && c.lane === lane),
      })),
      chart: charts.get(chartKey(endpoint.id, queue)),
    })),
  }));
}

/** A live session as the board shows it: its row, its last ring and the claims it holds. */
export type SessionView = Omit<McpSession, 'endpoint_id'> & { last_ring_at: Date | null; claims_held: number };

async function liveSessionViews(deps: EndpointDeps, endpointId: string): Promise<SessionView[]> {
  const sessions = await listLiveSessions(deps.db, endpointId);
  const activity = await sessionActivity(
    deps.db,
    endpointId,
    sessions.map((s) => s.id),
  );
  return sessions.map(({ endpoint_id: _e, ...s }) => {
    const a = activity.find((x) => x.session_id === s.id);
    return { ...s, last_ring_at: a?.last_ring_at ?? null, claims_held: a?.claims_held ?? 0 };
  });
}

/** Every endpoint of this human (revoked ones too, so they can be deleted) with live sessions. */
export async function endpointCards(
  deps: EndpointDeps,
  humanId: string,
  now: Date,
): Promise<Array<{ endpoint: EndpointView; sessions: SessionView[] }>> {
  const endpoints = await listEndpoints(deps, humanId, now);
  return Promise.all(
    endpoints.map(async (endpoint) => ({
      endpoint,
      sessions: await liveSessionViews(deps, endpoint.id),
    })),
  );
}

/** One endpoint of this human (by id or slug) with its live sessions as the board shows them. */
export async function endpointCardOf(
  deps: EndpointDeps,
  humanId: string,
  ref: string,
  now: Date,
): Promise<{ endpoint: EndpointView; sessions: SessionView[] }> {
  const { endpoint } = await showEndpoint(deps, humanId, ref, now);
  return { endpoint, sessions: await liveSessionViews(deps, endpoint.id) };
}

/** Changes whenever a lane of these endpoints could have changed; see liveFingerprint. */
export function lanesFingerprint(deps: EndpointDeps, endpointIds: Set<string>): Promise<string> {
  return liveFingerprint(deps.db, [...endpointIds]);
}

/** The ids of this human's endpoints: what a board event stream may hear about. */
export async function ownedEndpointIds(deps: EndpointDeps, humanId: string, now: Date): Promise<Set<string>> {
  return new Set((await listEndpoints(deps, humanId, now)).map((e) => e.id));
}

/** One live session of one of this human's endpoints; another human's answers not_found. */
export async function sessionOfHuman(
  deps: EndpointDeps,
  humanId: string,
  sessionId: string,
  now: Date,
): Promise<{ endpoint: EndpointView; session: SessionView }> {
  for (const { endpoint, sessions } of await endpointCards(deps, humanId, now)) {
    const session = sessions.find((s) => s.id === sessionId);
    if (session) return { endpoint, session };
  }
  throw notFound('session', sessionId);
}
