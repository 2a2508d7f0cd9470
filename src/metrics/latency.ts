// The latency histograms (docs/metrics.md, "Latency"): how long a todo waited ready
// before a claim took it, how long a claim ran before it was settled, how long a doorbell
// waited for the claim that took its todo, how long a long-poll waited before it was
// answered, and how long the HTTP host took to answer, by route pattern. Each todo or ring
// figure is observed in memory after the statement that decided it committed, from
// instants that statement returned; the long-poll is timed by the waiter itself: an
// observation costs a bucket search, never a query. Labels stay within the caps of
// Metrics.endpointLabel / queueLabel; the other labels are route patterns and fixed sets.

import { Histogram, type Registry } from 'prom-client';
import { combinations } from './define.js';

/**
 * Queue wait, 5 ms to a day: an agent on the doorbell claims within milliseconds, a
 * polling one within its poll interval, and a starved queue can hold work for hours. Past
 * a day the exact figure no longer matters (the +Inf bucket still counts it).
 */
export const QUEUE_WAIT_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400,
];

/**
 * Run time, 100 ms to a day: agent work is a tool call (seconds) to a long task (hours);
 * sub-100 ms runs are scripts whose exact speed nobody pages on.
 */
export const RUN_BUCKETS = [0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 86400];

/**
 * HTTP answers, 1 ms to a minute: a claim round trip is milliseconds; long-polls and MCP
 * streams hold a request open up to their own limits, which land in the top buckets.
 */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Doorbell delivery, 10 ms to 6 h: a script listening on the stream claims within
 * milliseconds, a model within a turn (seconds to a minute or two). A ring claimed after
 * SWITCHBOARD_DOORBELL_ACK_WINDOW (default 15 min, at most 6 h) was unheard and is still
 * observed, so 900 s and 21600 s are boundaries: the share above 900 is the share heard late
 * under the default window. Between them sit the re-ring points (5 min, 20 min, 1 h).
 */
export const DOORBELL_DELIVERY_BUCKETS = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1200, 3600, 21600,
];

/**
 * Long-poll waits, 5 ms to a minute: a waiter is answered within milliseconds of the event
 * that woke it, or at its fallback re-check (every 5 s, FALLBACK_MS), or at its deadline
 * (wait_seconds, at most 60, MAX_WAIT_SECONDS). A timeout lands just above its wait_seconds,
 * in the next bucket up (at 60, in +Inf), so `le="60"` minus the timeouts is work served.
 */
export const LONG_POLL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60];

/** The verbs that can wait (wait_seconds above 0). */
export type LongPollVerb = 'claim_next' | 'next_message';

/**
 * How a waiting call ended: `work` (an attempt claimed a todo or reserved a message, and
 * the caller was still there), `timeout` (its deadline passed with nothing), `closed` (its
 * session closed, its endpoint was revoked or this instance shut down), `gone` (the caller
 * disconnected first; what an attempt got meanwhile was given back), `error` (an attempt
 * failed, e.g. the database was unreachable: the call answers that error).
 */
export type LongPollOutcome = 'work' | 'timeout' | 'closed' | 'gone' | 'error';

export const LONG_POLL_OUTCOMES: readonly LongPollOutcome[] = ['work', 'timeout', 'closed', 'gone', 'error'];

/** How a claim was settled: complete → done, fail → failed, release → released. */
export type RunOutcome = 'done' | 'failed' | 'released';

/** Methods reported by name; any other (the parser accepts a few dozen) is `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** `metrics.latency`: built once, by the Metrics constructor. */
export class LatencyHistograms {
  readonly queueWait: Histogram<'endpoint' | 'queue'>;
  readonly run: Histogram<'endpoint' | 'queue' | 'outcome'>;
  readonly http: Histogram<'route' | 'method' | 'status_class'>;
  readonly doorbellDelivery: Histogram<'endpoint' | 'queue'>;
  readonly longPoll: Histogram<'verb' | 'outcome'>;

  constructor(registry: Registry) {
    this.queueWait = new Histogram({
      name: 'switchboard_queue_wait_seconds',
      help: 'Seconds a todo waited ready (pending, retry due or lease lapsed) before a committed claim took it.',
      labelNames: ['endpoint', 'queue'],
      buckets: QUEUE_WAIT_BUCKETS,
      registers: [registry],
    });
    this.run = new Histogram({
      name: 'switchboard_run_seconds',
      help: 'Seconds from a claim to its settling (complete, fail, release), by outcome.',
      labelNames: ['endpoint', 'queue', 'outcome'],
      buckets: RUN_BUCKETS,
      registers: [registry],
    });
    this.http = new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'Seconds the HTTP host took to answer, by route pattern (never the raw URL), method and status class.',
      labelNames: ['route', 'method', 'status_class'],
      buckets: HTTP_BUCKETS,
      registers: [registry],
    });
    // Observed from instants the deciding statements already return: the claim's own
    // ring acknowledgement (acked_at - sent_at, 0024_claim_ack_delivery.sql) or the ring
    // writer's insert of a ring its claim beat; never from a timer on the ringing instance,
    // which would miss a claim on another instance (docs/metrics.md, "Latency", says why).
    this.doorbellDelivery = new Histogram({
      name: 'switchboard_doorbell_delivery_seconds',
      help: 'Seconds from a todo doorbell written to a stream (the ring record) to the committed claim of its todo that acknowledged it, late ones included.',
      labelNames: ['endpoint', 'queue'],
      buckets: DOORBELL_DELIVERY_BUCKETS,
      registers: [registry],
    });
    this.longPoll = new Histogram({
      name: 'switchboard_long_poll_wait_seconds',
      help: 'Seconds a claim_next or next_message call with wait_seconds waited before it was answered, by how it ended.',
      labelNames: ['verb', 'outcome'],
      buckets: LONG_POLL_BUCKETS,
      registers: [registry],
    });
    // Its labels are a fixed set, so every series exists from the start (docs/metrics.md):
    // rate() and an alert on `outcome="error"` need a sample before the first such call.
    for (const labels of combinations({ verb: ['claim_next', 'next_message'], outcome: [...LONG_POLL_OUTCOMES] })) {
      this.longPoll.zero(labels);
    }
  }

  /** One waiting call ended (src/todos/waiters.ts): `seconds` from its first attempt to its answer. */
  waited(verb: LongPollVerb, outcome: LongPollOutcome, seconds: number): void {
    this.longPoll.observe({ verb, outcome }, seconds);
  }

  /** One answered request: `route` is the matched pattern (undefined: no route matched). */
  answered(route: string | undefined, method: string, status: number, seconds: number): void {
    this.http.observe(
      {
        route: route ?? 'unmatched',
        method: METHODS.has(method) ? method : 'other',
        status_class: `${Math.min(Math.max(Math.floor(status / 100), 1), 5)}xx`,
      },
      seconds,
    );
  }
}
