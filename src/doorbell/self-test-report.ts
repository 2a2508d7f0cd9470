// What a doorbell self-test reports (docs/design/doorbell-acknowledgement.md, "The
// self-test"). "Delivered" (the ring was written to a stream) and "heard" (a claim came
// back) are separate fields: `delivered` says the first, `claimed_within_seconds` and the
// verdict say the second. A report is frozen once (on the synthetic todo's claim, at
// expiry, or when the ring could not be written) from the facts read here; a pending test
// is reported from the same facts, live.

import type { Queryable } from '../db/pool.js';
import { getRing } from '../store/doorbell-rings.js';
import {
  completePassReport,
  freezeReport,
  getSyntheticTodo,
  getTest,
  type DoorbellTestRow,
} from '../store/doorbell-tests.js';
import { listLiveSessions, type McpSession } from '../store/sessions.js';
import { versionInfo } from '../version.js';
import { hintsFor, type HintGuidance, type Verdict } from './hints.js';

/** What the server can and cannot know about a client's channel listener. */
export const CHANNEL_NOTE =
  'the server cannot observe whether the client registered a channel listener; only a claim proves it';

export interface StoredReport {
  verdict: Verdict;
  stream_attached: boolean;
  clients: Array<{ name: string | null; version: string | null }>;
  /** Written to the session's stream: delivered, not yet proof that anyone heard it. */
  delivered: { written: boolean; at: string | null; session_id: string | null };
  claimed_within_seconds: number | null;
  /** The client name the hints were chosen for. */
  hint_client: string | null;
  /**
   * Whether each session the test is about declared claude/channel (the doorbell rings only
   * those); absent from reports frozen before it was recorded.
   */
  channel_sessions?: Array<{ session_id: string; declared: boolean }>;
}

export interface Facts {
  ring: Awaited<ReturnType<typeof getRing>>;
  /** The live sessions the test is about: its own session (MCP), or all of the endpoint's (API). */
  sessions: McpSession[];
}

export async function readFacts(db: Queryable, test: DoorbellTestRow): Promise<Facts> {
  const ring = test.ring_id ? await getRing(db, test.endpoint_id, test.ring_id) : null;
  const live = await listLiveSessions(db, test.endpoint_id);
  return { ring, sessions: test.session_id ? live.filter((s) => s.id === test.session_id) : live };
}

function clientsOf(sessions: McpSession[]) {
  const seen = new Map<string, { name: string | null; version: string | null }>();
  for (const s of sessions)
    seen.set(`${s.client_name}\u0000${s.client_version}`, { name: s.client_name, version: s.client_version });
  return [...seen.values()];
}

export function buildReport(verdict: Verdict, facts: Facts, claimedAt?: Date): StoredReport {
  const ring = facts.ring;
  const rung = ring ? facts.sessions.find((s) => s.id === ring.session_id) : undefined;
  const hintSession = rung ?? facts.sessions[0];
  const heard = verdict === 'pass';
  return {
    verdict,
    stream_attached: facts.sessions.some((s) => s.stream_open),
    clients: clientsOf(facts.sessions),
    delivered: ring
      ? { written: true, at: ring.sent_at.toISOString(), session_id: ring.session_id }
      : { written: heard, at: null, session_id: null },
    claimed_within_seconds:
      heard && claimedAt && ring
        ? Math.max(0, Math.round((claimedAt.getTime() - ring.sent_at.getTime()) / 100) / 10)
        : null,
    hint_client: hintSession?.client_name ?? null,
    channel_sessions: facts.sessions.map((s) => ({ session_id: s.id, declared: s.channel })),
  };
}

/**
 * The verdict of a test whose deadline passed without a claim of its todo in time: `pass`
 * only when its ring was acknowledged (ack_doorbell) before the deadline.
 */
export function expiryVerdict(test: DoorbellTestRow, facts: Facts): Verdict {
  if (!test.ring_id || !facts.ring) return 'write_failed';
  const ackedInTime = facts.ring.acked_at !== null && facts.ring.acked_at <= test.expires_at;
  return ackedInTime && !facts.ring.unheard_at ? 'pass' : 'unheard';
}

/** Freezes the test with this verdict (once; a concurrent freeze wins and this is a no-op). */
export async function freezeTest(
  db: Queryable,
  test: DoorbellTestRow,
  verdict: Verdict | 'expiry',
  claimedAt?: Date,
): Promise<boolean> {
  const facts = await readFacts(db, test);
  const final = verdict === 'expiry' ? expiryVerdict(test, facts) : verdict;
  const report = buildReport(final, facts, claimedAt);
  return freezeReport(db, { endpointId: test.endpoint_id, testId: test.id, report: { ...report } });
}

/**
 * The ring row of a test landed after its claim froze `pass` (the agent claimed within the
 * instant between the write and the row's insert): fill in delivered and the timing.
 */
export async function completePass(db: Queryable, endpointId: string, testId: string): Promise<void> {
  const test = await getTest(db, endpointId, testId);
  const frozen = test?.report as StoredReport | null | undefined;
  if (!test || frozen?.verdict !== 'pass' || frozen.delivered.at !== null) return;
  const todo = await getSyntheticTodo(db, endpointId, test.todo_id);
  const report = buildReport('pass', await readFacts(db, test), todo?.claimed_at ?? undefined);
  await completePassReport(db, { endpointId, testId, report: { ...report } });
}

/** What the server knows of the channel: the clients, which sessions declared it (and are rung), the limit. */
function channelCapability(report: StoredReport) {
  const sessions = (report.channel_sessions ?? []).map((s) => ({
    ...s,
    woken_by: s.declared ? ('doorbell' as const) : ('long_poll' as const),
  }));
  return { server_advertised: true as const, clients: report.clients, sessions, note: CHANNEL_NOTE };
}

/** test_doorbell's answer: returned before the ring. */
export function startView(test: DoorbellTestRow, facts: Facts) {
  const report = buildReport('pending', facts);
  return {
    test_id: test.id,
    todo_id: test.todo_id,
    report_after: test.expires_at.toISOString(),
    wait_seconds: test.wait_seconds,
    server_version: versionInfo().version,
    stream_attached: report.stream_attached,
    channel_capability: channelCapability(report),
  };
}

/**
 * get_doorbell_test's answer, from the frozen report or, while pending, from live facts;
 * the hints name the endpoint's MCP server and troubleshooting page from `guidance`.
 */
export function reportView(
  test: DoorbellTestRow,
  frozen: StoredReport | null,
  facts: Facts | null,
  guidance: HintGuidance,
) {
  const report = frozen ?? buildReport('pending', facts ?? { ring: null, sessions: [] });
  return {
    test_id: test.id,
    todo_id: test.todo_id,
    verdict: report.verdict,
    server_version: versionInfo().version,
    started_at: test.started_at.toISOString(),
    report_after: test.expires_at.toISOString(),
    started_via: test.started_via,
    stream_attached: report.stream_attached,
    channel_capability: channelCapability(report),
    delivered: report.delivered,
    claimed_within_seconds: report.claimed_within_seconds,
    hints: hintsFor(report.verdict, report.hint_client, guidance),
  };
}
