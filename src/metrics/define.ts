// How a family is defined on a registry: the helpers the Metrics constructor and each
// area's file beside it use, and the shape of a scrape-time collector. Nothing here keeps
// state; every family is created once, by the Metrics constructor (index.ts), or by
// Metrics.collect for scrape-time gauges.

import { Counter, type Gauge, type Registry } from 'prom-client';

/** A counter on this registry. */
export function counter<L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: L[] = [],
): Counter<L> {
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

/**
 * Creates these label sets at 0, so every series exists from the start: `increase()`
 * and alerts on a counter that has never moved need a sample to compare with.
 */
export function zero<L extends string>(counter: Counter<L>, labelSets: Array<Partial<Record<L, string>>>): void {
  for (const labels of labelSets) counter.inc(labels, 0);
}

/** Every combination of the given label values, for `zero`. */
export function combinations<L extends string>(values: Record<L, string[]>): Array<Record<L, string>> {
  return Object.entries<string[]>(values).reduce<Array<Record<string, string>>>(
    (sets, [label, options]) => sets.flatMap((set) => options.map((o) => ({ ...set, [label]: o }))),
    [{}],
  );
}

/** The label caps a gauge's samples go through (Metrics keeps the places given). */
export interface SeriesLabels {
  /** The `endpoint` label for a slug: itself under the cap, else `_other`. */
  endpointLabel(slug: string): string;
  /** The `queue` label for a queue name: itself under the cap, else `other`. */
  queueLabel(queue: string): string;
}

/** One gauge family of a collector: filled from the collector's read at each scrape. */
export interface ScrapeGauge<T> {
  name: string;
  help: string;
  labelNames?: string[];
  /** Sets this scrape's samples from the read (the gauge starts every scrape empty). */
  fill(gauge: Gauge<string>, read: T, labels: SeriesLabels): void;
}

/** Scrape-time gauges fed by one read per scrape (`Metrics.collect`). */
export interface Collector<T> {
  /** Its `collector` label on switchboard_collection_errors_total. */
  name: string;
  gauges: Array<ScrapeGauge<T>>;
}
