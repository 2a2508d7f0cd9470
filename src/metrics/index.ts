// The Prometheus registry of one process: built once by the composition root and handed
// to whatever counts. Every counter family is created here, once, when the registry is
// constructed (grouped by area: `metrics.doorbell`, `metrics.messages`,
// `metrics.admission`, `metrics.hooks`, `metrics.sessions`; the todo counters sit on the registry itself),
// so the registry's series are the same whatever starts first. Counters move after the
// transaction that did the thing commits, never before. Scrape-time gauges (read from the
// database, so every instance reports the same truth) are attached with `collect`, given
// a read function by the composition root: nothing in src/metrics/ reads the database.
// No endpoint, session, todo or human id is ever a label; the queue series carry the
// endpoint's slug (capped: SWITCHBOARD_METRICS_MAX_ENDPOINTS).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { admissionCounters } from './admission.js';
import { counter, type Collector, type SeriesLabels } from './define.js';
import { DoorbellCounters } from './doorbell.js';
import { HealthSeries } from './health.js';
import { hookCounters } from './hooks.js';
import { webhookCounters } from './webhooks.js';
import { LatencyHistograms } from './latency.js';
import { askCounters } from './asks.js';
import { messageCounters } from './messages.js';
import { sessionCounters } from './sessions.js';

/**
 * Distinct `queue` label values a process will report before folding the rest into
 * `other`: queue names are free text chosen by humans and agents, and every distinct
 * label is a time series kept forever by Prometheus. 200 covers any real install.
 */
export const QUEUE_LABEL_CAP = 200;

/** SWITCHBOARD_METRICS_MAX_ENDPOINTS's default (src/config/schema.ts says why). */
export const ENDPOINT_LABEL_CAP = 500;

/** SWITCHBOARD_QUEUE_WAIT_ALERT's default in seconds (src/config/schema.ts says why). */
export const QUEUE_WAIT_ALERT_SECONDS = 600;

type Outcome<T> = { ok: true; value: T } | { ok: false };

export class Metrics implements SeriesLabels {
  readonly registry = new Registry();
  readonly #queues = new Set<string>();
  readonly #endpoints = new Set<string>();
  readonly #maxEndpoints: number;
  /** This scrape's read of every attached collector (started on first use, shared by its gauges). */
  readonly #reads: Array<() => Promise<unknown>> = [];

  readonly todosCreated = counter(
    this.registry,
    'switchboard_todos_created_total',
    'Todos created (deduplicated creates excluded).',
  );
  readonly todosClaimed = counter(
    this.registry,
    'switchboard_todos_claimed_total',
    'Committed claims, by queue: first claims, retries and lease takeovers.',
    ['queue'],
  );
  readonly todosCompleted = counter(this.registry, 'switchboard_todos_completed_total', 'Todos completed.');
  readonly todosFailed = counter(
    this.registry,
    'switchboard_todos_failed_total',
    'Fail calls committed (retried or not).',
  );
  readonly todosDeadLettered = counter(
    this.registry,
    'switchboard_todos_dead_lettered_total',
    'Todos that ended failed.',
  );
  readonly todosReleased = counter(
    this.registry,
    'switchboard_todos_released_total',
    'Claims released back to pending.',
  );
  readonly leaseExpirations = counter(this.registry, 'switchboard_lease_expirations_total', 'Leases that lapsed.');
  readonly todoAttempts = counter(this.registry, 'switchboard_todo_attempts_total', 'Attempt rows opened.');
  /** Calls each coalesced statement served (docs/design/coalescing.md): 1 at low load. */
  readonly coalescedCalls = new Histogram<'statement'>({
    name: 'switchboard_coalesced_calls',
    help: 'Calls one claim, settle or create statement served together (group commit): 1 when alone.',
    labelNames: ['statement'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [this.registry],
  });
  /**
   * The one counter of failing collectors. It is read after this scrape's reads settled,
   * so a failure shows in the scrape that met it.
   */
  readonly collectionErrors = new Counter<'collector'>({
    name: 'switchboard_collection_errors_total',
    help: 'Scrape-time collectors that failed (their series are left out of that scrape).',
    labelNames: ['collector'],
    registers: [this.registry],
    collect: async () => {
      await Promise.all(this.#reads.map((read) => read()));
    },
  });

  readonly asks = askCounters(this.registry);
  readonly admission = admissionCounters(this.registry);
  readonly doorbell = new DoorbellCounters(this.registry);
  readonly messages = messageCounters(this.registry);
  readonly hooks = hookCounters(this.registry);
  readonly webhooks = webhookCounters(this.registry);
  readonly sessions = sessionCounters(this.registry);
  readonly health = new HealthSeries(this.registry);
  readonly latency = new LatencyHistograms(this.registry);

  /**
   * `maxEndpoints`: SWITCHBOARD_METRICS_MAX_ENDPOINTS (the default when omitted).
   * `queueWaitAlertSeconds`: SWITCHBOARD_QUEUE_WAIT_ALERT, served as a gauge so the alert
   * rule compares the p95 queue wait with the operator's setting (docs/metrics.md, "Alerts").
   */
  constructor(options: { defaults?: boolean; maxEndpoints?: number; queueWaitAlertSeconds?: number } = {}) {
    this.#maxEndpoints = options.maxEndpoints ?? ENDPOINT_LABEL_CAP;
    new Gauge({
      name: 'switchboard_queue_wait_alert_seconds',
      help: 'SWITCHBOARD_QUEUE_WAIT_ALERT: the p95 queue wait SwitchboardQueueWaitHigh alerts above.',
      registers: [this.registry],
    }).set(options.queueWaitAlertSeconds ?? QUEUE_WAIT_ALERT_SECONDS);
    if (options.defaults ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Attaches a collector: its gauges, read at scrape time through `read`. One read per
   * scrape feeds all of them (the first gauge collected starts it). When it fails, the
   * gauges are left out of that scrape and `switchboard_collection_errors_total{collector}`
   * counts it — a failing collector never fails the scrape. Each collector is attached
   * once (a gauge name registers once per registry).
   */
  collect<T>(collector: Collector<T>, read: () => Promise<T>): void {
    const taken = collector.gauges.find((g) => this.registry.getSingleMetric(g.name));
    if (taken) throw new Error(`${taken.name} is registered already: a collector is attached once`);
    const errors = this.collectionErrors;
    const failed = () => errors.inc({ collector: collector.name });
    errors.inc({ collector: collector.name }, 0);
    let current: Promise<Outcome<T>> | null = null;
    const scrape = () =>
      (current ??= read()
        .then(
          (value): Outcome<T> => ({ ok: true, value }),
          (): Outcome<T> => {
            failed();
            return { ok: false };
          },
        )
        .finally(() => setImmediate(() => (current = null))));
    this.#reads.push(scrape);
    for (const spec of collector.gauges) {
      const labelNames = spec.labelNames ?? [];
      /** This scrape's samples: whether the gauge has any (false: left out of the scrape). */
      const fill = async (gauge: Gauge<string>): Promise<boolean> => {
        const outcome = await scrape();
        gauge.reset();
        if (!outcome.ok) return false;
        try {
          spec.fill(gauge, outcome.value, this);
          return true;
        } catch {
          gauge.reset();
          failed();
          return false;
        }
      };
      new Gauge<string>({
        name: spec.name,
        help: spec.help,
        labelNames,
        registers: [this.registry],
        async collect() {
          // Left out: reset() alone would leave an unlabelled gauge at 0.
          if (!(await fill(this)) && labelNames.length === 0) this.remove({});
        },
      });
    }
  }

  /**
   * The `endpoint` label for a slug: itself once it got a place under the cap, else
   * `_other` (a slug cannot start with `_`). A place, once given, is kept for the life of
   * the process, so a series never changes its label between scrapes.
   */
  endpointLabel(slug: string): string {
    if (this.#endpoints.has(slug)) return slug;
    if (this.#endpoints.size >= this.#maxEndpoints) return '_other';
    this.#endpoints.add(slug);
    return slug;
  }

  /**
   * One todo ring a claim acknowledged (switchboard_doorbell_delivery_seconds), under the
   * label caps: from the claim's answer (src/todos/admission.ts) or, for a ring recorded
   * after its claim, from the ring writer's insert (src/doorbell/ring-writer.ts).
   */
  doorbellDelivered(endpointSlug: string, queue: string, seconds: number): void {
    this.latency.doorbellDelivery.observe(
      { endpoint: this.endpointLabel(endpointSlug), queue: this.queueLabel(queue) },
      seconds,
    );
  }

  /** The `queue` label for a queue name: itself while under the cap, else `other`. */
  queueLabel(queue: string): string {
    if (this.#queues.has(queue)) return queue;
    if (this.#queues.size >= QUEUE_LABEL_CAP) return 'other';
    this.#queues.add(queue);
    return queue;
  }
}
