// Delivery of notify hook notifications from this instance: a bounded in-memory queue
// (overflow is dropped and counted: the queue is the ledger, a notification is a hint),
// a few workers, and per notification at most 3 attempts with jittered backoff, retried
// only on network errors, timeouts, 408, 429 and 5xx. Before every attempt the hook is
// re-read (deleted or disabled hooks stop) and its URL re-checked by the SSRF guard. The
// webhook-id is constant across the attempts; the body's `attempt` counts them.
// Nothing is persisted: a restart loses what was in flight. With tracing on, each attempt
// is a client span linked to the todo's trace, and the receiver gets its `traceparent`
// (docs/design/tracing.md, "Notify hooks").

import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { isAppError } from '../domain/errors.js';
import { NO_KEYRING, open, type Keyring } from '../secrets/keyring.js';
import { hookForAttempt, recordDelivery } from '../store/notify-hooks.js';
import type { HookCounters } from '../metrics/hooks.js';
import { NO_TRACING, type Tracing } from '../tracing/index.js';
import type { HookGuard } from './guard.js';
import { send, type SendResult } from './send.js';
import { signedHeaders } from './sign.js';

/** Five seconds: a receiver only has to accept a hint; slow ones must not pile work up here. */
export const ATTEMPT_TIMEOUT_MS = 5_000;
export const MAX_ATTEMPTS = 3;
/** Failed deliveries in a row that disable a hook: a dead receiver stops costing attempts. */
export const DISABLE_AFTER = 10;
/** Waits before the 2nd and 3rd attempt (±50 % jitter): a blip passes, a dead host is left soon. */
const BACKOFF_MS = [1_000, 5_000];
// A thousand queued notifications per instance is minutes of backlog for a slow receiver;
// beyond that the hint is worth less than the memory.
const QUEUE_MAX = 1_000;
const WORKERS = 4;

/** The notifications a hook carries (docs/design/hooks-and-presence.md; todo.waiting_on_human: docs/design/ask-human.md). */
export const HOOK_EVENT_TYPES = ['todo.ready', 'todos.backlog', 'todo.waiting_on_human'] as const;
export type HookEventType = (typeof HOOK_EVENT_TYPES)[number];

export interface HookJob {
  endpointId: string;
  hookId: string;
  /** `msg_<ULID>`: the webhook-id, constant across attempts. */
  messageId: string;
  type: HookEventType;
  /** The body without `attempt`, which each attempt sets. */
  body: Record<string, unknown>;
  /** The todo's stored trace context (todo.ready, todo.waiting_on_human); the attempts' spans link to it. */
  traceparent?: string | null;
}

export interface DeliveryDeps {
  db: Pool;
  guard: HookGuard;
  log: Logger;
  metrics?: HookCounters;
  /** Opens the signing secrets sealed at rest (docs/design/intake.md, "Secrets at rest"). */
  keyring?: Keyring;
  /** Trusted CA certificates for receivers (tests); the system's otherwise. */
  ca?: string;
  /** Backoff before attempts 2 and 3; tests shorten it. */
  backoffMs?: number[];
  timeoutMs?: number;
  queueMax?: number;
  /** The server version, for the user-agent. */
  version?: string;
  tracing?: Tracing;
}

/** A refusal by the SSRF guard: retrying within seconds would only be refused again. */
type Attempted = SendResult | { error: string; refused: true };

const retryable = (r: Attempted) =>
  ('error' in r && !('refused' in r)) || ('status' in r && (r.status === 408 || r.status === 429 || r.status >= 500));
const traceHeader = (traceparent: string | null): Record<string, string> => (traceparent ? { traceparent } : {});
const delivered = (r: Attempted) => 'status' in r && r.status >= 200 && r.status < 300;

export class HookDelivery {
  private readonly queue: HookJob[] = [];
  private active = 0;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** Wakes backoff waits at shutdown, so stop() never waits out a retry schedule. */
  private readonly wake = new AbortController();
  /** Notifications dropped because the queue was full. */
  dropped = 0;

  constructor(private readonly deps: DeliveryDeps) {}

  /** Queues a notification; false (dropped and counted) when the queue is full or stopped. */
  enqueue(job: HookJob): boolean {
    if (this.stopped || this.queue.length >= (this.deps.queueMax ?? QUEUE_MAX)) {
      this.dropped += 1;
      this.deps.metrics?.notifications.inc({ type: job.type, outcome: 'dropped' });
      return false;
    }
    this.queue.push(job);
    this.pump();
    return true;
  }

  /** Resolves when nothing is queued or in flight (tests, shutdown). */
  idle(): Promise<void> {
    if (this.active === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    this.wake.abort();
    await this.idle();
  }

  private pump(): void {
    while (this.active < WORKERS && this.queue.length > 0) {
      const job = this.queue.shift() as HookJob;
      this.active += 1;
      void this.deliver(job)
        .catch((err: unknown) => this.deps.log.error({ err, hook: job.hookId }, 'notify hook delivery failed'))
        .finally(() => {
          this.active -= 1;
          this.pump();
          if (this.active === 0 && this.queue.length === 0) this.idleWaiters.splice(0).forEach((w) => w());
        });
    }
  }

  private async deliver(job: HookJob): Promise<void> {
    let last: Attempted = { error: 'not attempted' };
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) await this.sleep(this.backoff(attempt - 2));
      if (this.stopped && attempt > 1) break;
      const result = await this.attempt(job, attempt);
      if (result === null) return;
      last = result;
      if (delivered(result) || !retryable(result) || this.stopped) break;
    }
    const ok = delivered(last);
    const status = 'status' in last ? last.status : null;
    const error = ok ? null : 'error' in last ? last.error : `HTTP ${status}`;
    const { disabled } = await recordDelivery(this.deps.db, {
      endpointId: job.endpointId,
      id: job.hookId,
      ok,
      status,
      error,
      disableAfter: DISABLE_AFTER,
    });
    this.deps.metrics?.notifications.inc({ type: job.type, outcome: ok ? 'delivered' : 'failed' });
    if (disabled) {
      this.deps.metrics?.disabled.inc({ reason: 'consecutive_failures' });
      this.deps.log.warn({ hook: job.hookId, failures: DISABLE_AFTER }, 'notify hook disabled after failures');
    }
  }

  /** One attempt, in a span of its own when tracing is on. */
  private async attempt(job: HookJob, attempt: number): Promise<Attempted | null> {
    const tracing = this.deps.tracing ?? NO_TRACING;
    if (!tracing.enabled) return this.post(job, attempt, tracing);
    const span = tracing.start('hook POST', {
      kind: 'client',
      root: true,
      links: [job.traceparent],
      attributes: {
        'http.request.method': 'POST',
        'switchboard.hook': job.hookId,
        'switchboard.hook.type': job.type,
        'switchboard.attempt': attempt,
      },
    });
    try {
      const result = await tracing.activate(span, () => this.post(job, attempt, tracing));
      if (result === null) span.setAttribute('switchboard.outcome', 'hook_gone');
      else if ('status' in result) span.setAttribute('http.response.status_code', result.status);
      if (result !== null && !delivered(result)) span.fail('error' in result ? result.error : `HTTP ${result.status}`);
      return result;
    } finally {
      span.end();
    }
  }

  /** One POST; null when the hook is gone or disabled (nothing to record). */
  private async post(job: HookJob, attempt: number, tracing: Tracing): Promise<Attempted | null> {
    const hook = await hookForAttempt(this.deps.db, job.endpointId, job.hookId);
    if (!hook || !hook.enabled) return null;
    let target;
    try {
      target = await this.deps.guard.resolve(hook.url);
    } catch (err) {
      this.deps.metrics?.attempts.inc({ result: 'refused' });
      return { error: isAppError(err) ? err.message : 'target refused', refused: true };
    }
    const body = JSON.stringify({ ...job.body, attempt });
    const headers = {
      ...signedHeaders(
        hook.secrets.map((s) => open(this.deps.keyring ?? NO_KEYRING, s)),
        job.messageId,
        Math.floor(Date.now() / 1000),
        body,
      ),
      'content-type': 'application/json',
      'user-agent': this.deps.version ? `switchboard/${this.deps.version}` : 'switchboard',
      // The attempt's span, so a traced receiver continues the trace (W3C Trace Context).
      ...(tracing.enabled ? traceHeader(tracing.traceparent()) : {}),
    };
    const result = await send(target, headers, body, {
      timeoutMs: this.deps.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
      ...(this.deps.ca ? { ca: this.deps.ca } : {}),
    });
    this.deps.metrics?.attempts.inc({ result: 'error' in result ? 'network' : `${Math.floor(result.status / 100)}xx` });
    return result;
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.wake.signal;
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private backoff(index: number): number {
    const base = (this.deps.backoffMs ?? BACKOFF_MS)[index] ?? 0;
    return Math.round(base * (0.5 + Math.random()));
  }
}
