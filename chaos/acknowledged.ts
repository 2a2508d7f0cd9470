// Two checks of the failover scenario (chaos/failover.ts, issue 38 "What must hold"):
//
// - ReadyWatch polls /readyz of every serve instance through a fault, so the scenario can
//   say that each answered 503 while no writable primary answered (as the writable-primary
//   probe measured it), and answered 200 then at most a bounded number of polls (the
//   probe's edges are as coarse as its own connects).
// - checkAcknowledged reads the new primary after a fault: every `complete` a worker was
//   answered OK for is done, closed as the attempt it was sent for; every claim a worker
//   was answered is on record as that session's attempt under the lease token it was
//   answered, and its lease still holds (the todo's open attempt, owned by that session)
//   or the attempt has ended (settled, or the lease lapsed and was reaped).

import type { Pool } from '../src/db/pool.js';
import type { CompleteLog, Violation } from './todos.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 200s a watch may see inside a gap per instance: a poll racing the probe's own edge. */
export const READY_200_IN_GAP = 2;

interface ReadyPoll {
  instance: string;
  start: number;
  end: number;
  /** HTTP status, or 0 when the request itself failed. */
  status: number;
}

/** Polls /readyz of each instance, 100 ms after each answer, until stopped. */
export class ReadyWatch {
  readonly polls: ReadyPoll[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[];

  constructor(instances: Array<{ name: string; url: string }>) {
    this.loops = instances.map(async (i) => {
      while (!this.stopped) {
        const start = Date.now();
        const status = await fetch(`${i.url}/readyz`, { signal: AbortSignal.timeout(15_000) }).then(
          (r) => r.status,
          () => 0,
        );
        this.polls.push({ instance: i.name, start, end: Date.now(), status });
        await sleep(100);
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /**
   * Against the gap [from, to) without a writable primary: a 503 counts when its poll
   * overlaps the gap, a 200 only when its poll lies wholly inside it.
   */
  judge(
    instances: string[],
    gap: { from: number; to: number } | null,
    fault: string,
  ): { violations: Violation[]; fact: string } {
    const violations: Violation[] = [];
    const parts: string[] = [];
    for (const name of instances) {
      const mine = this.polls.filter((p) => p.instance === name);
      if (!gap) {
        violations.push({ check: `${name} /readyz 503 during the ${fault}`, detail: 'the probe saw no gap' });
        continue;
      }
      const unready = mine.filter((p) => p.status === 503 && p.start < gap.to && p.end > gap.from).length;
      const ready = mine.filter((p) => p.status === 200 && p.start >= gap.from && p.end < gap.to).length;
      parts.push(`${name} ${unready}×503, ${ready}×200 in the gap (${mine.length} polls)`);
      if (unready === 0) {
        violations.push({
          check: `${name} /readyz answered 503 while no writable primary answered (${fault})`,
          detail: `none of ${mine.length} polls: ${summarize(mine)}`,
        });
      }
      if (ready > READY_200_IN_GAP) {
        violations.push({
          check: `${name} /readyz answered 200 at most ${READY_200_IN_GAP} polls while no writable primary answered (${fault})`,
          detail: `${ready} polls`,
        });
      }
    }
    return { violations, fact: `/readyz through the ${fault}: ${parts.join('; ') || 'not judged'}` };
  }
}

function summarize(polls: ReadyPoll[]): string {
  const counts = new Map<number, number>();
  for (const p of polls) counts.set(p.status, (counts.get(p.status) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${s || 'no answer'} ×${n}`).join(', ');
}

/** A claim a worker was answered: the attempt it opened, and the lease token it got. */
export interface ClaimLog {
  todo: string;
  seq: number;
  session: string;
  token: string;
}

/** Every answered complete is done, every answered claim held or ended; an empty list is a pass. */
export async function checkAcknowledged(
  pool: Pool,
  endpointId: string,
  completes: CompleteLog[],
  claims: ClaimLog[],
  when: string,
): Promise<Violation[]> {
  const out: Violation[] = [];
  const oks = completes.filter((c) => c.outcome === 'ok');
  const done = await pool.query<{ todo: string }>(
    `SELECT c.todo FROM unnest($2::text[], $3::int[], $4::text[]) AS c(todo, seq, session)
       JOIN todos t ON t.endpoint_id = $1 AND t.id = c.todo AND t.state = 'done'
       JOIN todo_attempts a ON a.endpoint_id = t.endpoint_id AND a.todo_id = t.id AND a.seq = c.seq
        AND a.session_id = c.session AND a.outcome = 'completed'`,
    [endpointId, oks.map((c) => c.todo), oks.map((c) => c.seq), oks.map((c) => c.session)],
  );
  const isDone = new Set(done.rows.map((r) => r.todo));
  const notDone = oks.filter((c) => !isDone.has(c.todo));
  if (notDone.length > 0) {
    out.push({
      check: `every complete answered OK is done, as its attempt (${when})`,
      detail: `${notDone.length} of ${oks.length}, e.g. ${JSON.stringify(notDone.slice(0, 5))}`,
    });
  }
  const held = await pool.query<{ i: number }>(
    `SELECT c.i FROM unnest($2::text[], $3::int[], $4::text[], $5::text[]) WITH ORDINALITY AS c(todo, seq, session, token, i)
       JOIN todo_attempts a ON a.endpoint_id = $1 AND a.todo_id = c.todo AND a.seq = c.seq
        AND a.session_id = c.session AND a.lease_token_hash = sha256(convert_to(c.token, 'UTF8'))
       JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.id = a.todo_id
      WHERE a.ended_at IS NOT NULL
         OR (t.state = 'claimed' AND t.claims = a.seq AND t.owner_session_id = c.session)`,
    [
      endpointId,
      claims.map((c) => c.todo),
      claims.map((c) => c.seq),
      claims.map((c) => c.session),
      claims.map((c) => c.token),
    ],
  );
  const ok = new Set(held.rows.map((r) => Number(r.i) - 1));
  const lost = claims.filter((_, i) => !ok.has(i));
  if (lost.length > 0) {
    out.push({
      check: `every answered claim is its session's attempt under its lease token, held or ended (${when})`,
      detail: `${lost.length} of ${claims.length}, e.g. ${JSON.stringify(lost.slice(0, 5).map(({ token: _, ...c }) => c))}`,
    });
  }
  return out;
}
