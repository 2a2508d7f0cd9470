// The Prometheus registry of one process: built once by the composition root and handed
// to whatever counts. Counters move after the transaction that did the thing commits,
// never before. Scrape-time collectors (read from the database, so every instance
// reports the same truth) register here too; each area adds its series in its own file
// beside this one. No endpoint, session, todo or human id is ever a label.

import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Distinct `queue` label values a process will report before folding the rest into
 * `other`: queue names are free text chosen by humans and agents, and every distinct
 * label is a time series kept forever by Prometheus. 200 covers any real install.
 */
export const QUEUE_LABEL_CAP = 200;

export class Metrics {
  readonly registry = new Registry();
  readonly #queues = new Set<string>();

  readonly todosCreated = this.counter(
    'switchboard_todos_created_total',
    'Todos created (deduplicated creates excluded).',
  );
  readonly todosClaimed = this.counter(
    'switchboard_todos_claimed_total',
    'Committed claims, by queue: first claims, retries and lease takeovers.',
    ['queue'],
  );
  readonly todosCompleted = this.counter('switchboard_todos_completed_total', 'Todos completed.');
  readonly todosFailed = this.counter('switchboard_todos_failed_total', 'Fail calls committed (retried or not).');
  readonly todosDeadLettered = this.counter('switchboard_todos_dead_lettered_total', 'Todos that ended failed.');
  readonly todosReleased = this.counter('switchboard_todos_released_total', 'Claims released back to pending.');
  readonly leaseExpirations = this.counter('switchboard_lease_expirations_total', 'Leases that lapsed.');
  readonly todoAttempts = this.counter('switchboard_todo_attempts_total', 'Attempt rows opened.');
  readonly collectionErrors = this.counter(
    'switchboard_collection_errors_total',
    'Scrape-time collectors that failed (their series are left out of that scrape).',
    ['collector'],
  );

  constructor(options: { defaults?: boolean } = {}) {
    if (options.defaults ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** A counter on this registry; areas call it from their own files for their series. */
  counter<L extends string = never>(name: string, help: string, labelNames: L[] = []): Counter<L> {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  /**
   * A gauge read at scrape time. `read` sets its values; when it throws, the gauge is
   * left empty for this scrape and `switchboard_collection_errors_total{collector}`
   * counts it — a failing collector never fails the scrape.
   */
  gauge<L extends string>(
    collector: string,
    name: string,
    help: string,
    labelNames: L[],
    read: (gauge: Gauge<L>) => Promise<void>,
  ): Gauge<L> {
    const errors = this.collectionErrors;
    errors.inc({ collector }, 0);
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          await read(this);
        } catch {
          this.reset();
          errors.inc({ collector });
        }
      },
    });
  }

  /**
   * Creates these label sets at 0, so every series exists from the start: `increase()`
   * and alerts on a counter that has never moved need a sample to compare with.
   */
  zero<L extends string>(counter: Counter<L>, labelSets: Array<Partial<Record<L, string>>>): void {
    for (const labels of labelSets) counter.inc(labels, 0);
  }

  /** Every combination of the given label values, for `zero`. */
  static combinations<L extends string>(values: Record<L, string[]>): Array<Record<L, string>> {
    return Object.entries<string[]>(values).reduce<Array<Record<string, string>>>(
      (sets, [label, options]) => sets.flatMap((set) => options.map((o) => ({ ...set, [label]: o }))),
      [{}],
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
