// The clock-in digest and time-driven presence changes, as a service of one instance.
// A change to `in` (clock_in, operator, shift start, override end) owes the endpoint one
// digest; every instance hears presence_in, and the conditional claim of digest_due_at
// lets exactly one send it: one ring (meta.kind = "digest") to one streaming session and
// one `todos.backlog` notification per notify hook — only when push-eligible work waits.
// evaluate() (the presence sweep) records shift boundaries and ended overrides.

import type { Logger } from 'pino';
import { newId } from '../domain/ids.js';
import type { Pool } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import type { ChannelParams } from '../doorbell/content.js';
import { neutralise } from '../doorbell/content.js';
import type { DeliveredRing } from '../doorbell/ring-writer.js';
import { isPushEligible } from '../hooks/eligibility.js';
import type { NotifyHooks } from '../hooks/notify.js';
import {
  applyPresence,
  claimDigest,
  claimDigestTarget,
  endpointsOwedDigest,
  getPresenceRow,
  presenceCandidates,
  type DigestQueue,
  type PresenceRow,
} from '../store/presence.js';
import { effectivePresence, overrideActive } from './evaluate.js';
import type { Bus } from '../domain/events.js';

/** Endpoints evaluated per sweep tick; more wait for the next tick. */
const EVALUATE_LIMIT = 1_000;

export interface DigestSender {
  send(ring: DeliveredRing, params: ChannelParams, instance: string): Promise<void>;
}

export interface PresenceServiceDeps {
  db: Pool;
  log: Logger;
  doorbell: DigestSender;
  hooks?: NotifyHooks;
}

export function digestParams(queues: DigestQueue[], reason: string, ringId: string): ChannelParams {
  const pending = queues.reduce((n, q) => n + q.pending, 0);
  const oldest = Math.max(...queues.map((q) => q.oldest_seconds));
  const names = queues.map((q) => neutralise(q.queue)).sort();
  const content = [
    `You are clocked in. ${pending} todo(s) are waiting on ${names.map((n) => `"${n}"`).join(', ')}; ` +
      `the oldest has waited ${Math.round(oldest / 60)} min.`,
    'Claim them with claim_next, do the work, then complete each; every claim ends in complete, fail or release.',
  ].join('\n');
  return {
    content,
    meta: { kind: 'digest', pending: String(pending), queues: names.join(','), reason, ring_id: ringId },
  };
}

export class PresenceService {
  /** Digest rings this instance sent (written or forwarded), for tests. */
  digests = 0;

  constructor(private readonly deps: PresenceServiceDeps) {}

  listen(bus: Bus): () => void {
    return bus.subscribe('presence_in', (e) => {
      void this.digest(e.endpoint_id);
    });
  }

  /** Sends the endpoint's owed digest if this instance wins it; whether it sent a ring. */
  async digest(endpointId: string): Promise<boolean> {
    try {
      const owed = await claimDigest(this.deps.db, endpointId);
      if (!owed) return false;
      const queues: DigestQueue[] = [];
      for (const q of owed.queues) if (await isPushEligible(this.deps.db, endpointId, q.queue)) queues.push(q);
      if (queues.length === 0) return false;
      const names = queues.map((q) => q.queue);
      const pending = queues.reduce((n, q) => n + q.pending, 0);
      const oldestPendingSeconds = Math.max(...queues.map((q) => q.oldest_seconds));
      await this.deps.hooks?.backlog(endpointId, {
        slug: owed.slug,
        reason: owed.reason,
        pending,
        queues: names,
        oldestPendingSeconds,
      });
      const target = await claimDigestTarget(this.deps.db, { endpointId, queues: names });
      if (!target) return false;
      // Recorded by the ring writer as kind 'digest': any claim of the endpoint acknowledges it.
      const ring: DeliveredRing = {
        id: newId('rg'),
        endpointId,
        sessionId: target.session_id,
        todoId: null,
        kind: 'digest',
        queue: null,
        synthetic: false,
        claimsBefore: 0,
      };
      await this.deps.doorbell.send(ring, digestParams(queues, owed.reason, ring.id), target.instance);
      this.digests += 1;
      return true;
    } catch (err) {
      this.deps.log.error({ err, endpoint: endpointId }, 'presence digest failed');
      return false;
    }
  }

  /** The presence sweep: records time-driven changes, then sends digests whose notice was lost. */
  async evaluate(): Promise<{ changed: number; digests: number }> {
    const { rows, now } = await presenceCandidates(this.deps.db, EVALUATE_LIMIT);
    let changed = 0;
    for (const row of rows) if (await this.reevaluate(row, now)) changed += 1;
    let digests = 0;
    for (const endpointId of await endpointsOwedDigest(this.deps.db, EVALUATE_LIMIT)) {
      if (await this.digest(endpointId)) digests += 1;
    }
    return { changed, digests };
  }

  /**
   * A change the candidate row shows is confirmed on the row read again under a lock: a
   * clock_out or operator write that committed after the candidates were read would
   * otherwise be overwritten by the change the older row showed.
   */
  private async reevaluate(candidate: PresenceRow, now: Date): Promise<boolean> {
    if (!this.change(candidate, now)) return false;
    return inTransaction(this.deps.db, async (db) => {
      const found = await getPresenceRow(db, candidate.id, { lock: true });
      const change = found && this.change(found.row, found.now);
      return change ? applyPresence(db, { endpointId: candidate.id, ...change }) : false;
    });
  }

  /** The time-driven change a row is owed, with its reason, or null. */
  private change(row: PresenceRow, now: Date): { presence: 'in' | 'out'; reason: string } | null {
    let presence: 'in' | 'out';
    try {
      presence = effectivePresence(row, now).presence;
    } catch (err) {
      this.deps.log.warn({ err, endpoint: row.id }, 'presence of this endpoint cannot be evaluated');
      return null;
    }
    if (presence === row.presence_seen) return null;
    const ended = row.presence_override !== null && !overrideActive(row, now);
    return { presence, reason: presence === 'in' ? (ended ? 'override_end' : 'shift_start') : 'shift_end' };
  }
}
