// Runs rule tests laid out like `promtool test rules` files (test/metrics/rules/*.yml):
// input_series in promtool's expanding notation, recorded every `interval` from time 0;
// alert_rule_test entries naming an alert, an eval_time and the alerts expected to be
// FIRING then. The rules are evaluated every evaluation_interval from 0 to eval_time, and
// an alert fires only once its expression has held at every evaluation for its `for:`
// (Prometheus's pending → firing). Expected alerts are compared by labels (the series'
// labels, minus the name, plus the rule's labels), not by annotations.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { durationMs, evaluate, parse, type Labels, type Point, type Series } from './promql.js';

export interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
}

export interface RuleTestFile {
  rule_files: string[];
  evaluation_interval?: string;
  tests: Array<{
    name?: string;
    interval?: string;
    input_series: Array<{ series: string; values: string }>;
    alert_rule_test: Array<{
      eval_time: string;
      alertname: string;
      exp_alerts: Array<{ exp_labels?: Labels }>;
    }>;
  }>;
}

/** One alert_rule_test's outcome: the labels expected and those that fired. */
export interface Verdict {
  test: string;
  alertname: string;
  evalTime: string;
  expected: Labels[];
  fired: Labels[];
}

/** A sample value in the notation: a decimal, or ±Inf, or NaN. */
const NUMBER = String.raw`-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[+-]?Inf|NaN`;

/**
 * promtool's expanding notation: `a+bxn` (and `a-bxn`) is a, a+b, …, a+n·b (n+1 values);
 * `axn` is a repeated n+1 times; `_` is one missed scrape and `_xn` n of them; `stale`
 * is a staleness marker (the series vanished, as when its target went away).
 */
export function expandValues(text: string): Array<number | '_' | 'stale'> {
  const out: Array<number | '_' | 'stale'> = [];
  for (const word of text.trim().split(/\s+/)) {
    let m: RegExpExecArray | null;
    if (word === '_' || word === 'stale') out.push(word);
    else if ((m = /^_x(\d+)$/.exec(word))) for (let i = 0; i < Number(m[1]); i++) out.push('_');
    else if ((m = new RegExp(`^(${NUMBER})(?:([+-])(${NUMBER}))?x(\\d+)$`).exec(word))) {
      const start = Number(m[1]?.replace('Inf', 'Infinity'));
      const step = m[2] ? Number(`${m[2]}${m[3]}`) : 0;
      for (let i = 0; i <= Number(m[4]); i++) out.push(start + i * step);
    } else if (new RegExp(`^(?:${NUMBER})$`).test(word)) out.push(Number(word.replace('Inf', 'Infinity')));
    else throw new Error(`bad series value "${word}" in "${text}"`);
  }
  return out;
}

/** `name{a="b", c="d"}` → its labels, the name as __name__. */
export function seriesLabels(text: string): Labels {
  const m = /^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(?:\{(.*)\})?\s*$/.exec(text);
  if (!m) throw new Error(`bad series "${text}"`);
  const labels: Labels = m[1] ? { __name__: m[1] } : {};
  for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"/g))
    labels[l[1] as string] = JSON.parse(`"${l[2]}"`) as string;
  return labels;
}

function record(input: Array<{ series: string; values: string }>, intervalMs: number): Series[] {
  return input.map(({ series, values }) => {
    const points: Point[] = [];
    expandValues(values).forEach((v, i) => {
      if (v !== '_') points.push({ t: i * intervalMs, v });
    });
    return { labels: seriesLabels(series), points };
  });
}

const labelKey = (labels: Labels) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));

/**
 * The labels of the alerts of `rule` FIRING at `evalTimeMs`: the expression evaluated at
 * every evaluation from 0, each alert's active-since kept while it keeps holding.
 */
export function firingAt(rule: Rule, series: Series[], evalTimeMs: number, evaluationMs: number): Labels[] {
  const expr = parse(rule.expr);
  const holdMs = rule.for === undefined ? 0 : durationMs(rule.for);
  let active = new Map<string, { labels: Labels; since: number }>();
  for (let t = 0; t <= evalTimeMs; t += evaluationMs) {
    const value = evaluate(expr, series, t);
    if (value.kind !== 'vector') throw new Error(`${rule.alert}: the expression must be an instant vector`);
    const now = new Map<string, { labels: Labels; since: number }>();
    for (const sample of value.samples) {
      const { __name__: _, ...rest } = sample.labels;
      const labels = { ...rest, ...rule.labels, alertname: rule.alert };
      const k = labelKey(labels);
      if (now.has(k)) throw new Error(`${rule.alert}: two samples give the alert labels ${k}`);
      now.set(k, { labels, since: active.get(k)?.since ?? t });
    }
    active = now;
  }
  return [...active.values()].filter((a) => evalTimeMs - a.since >= holdMs).map((a) => a.labels);
}

/** Loads a rules file's alerting rules. */
export function loadRules(path: string): Rule[] {
  const doc = parseYaml(readFileSync(path, 'utf8')) as { groups: Array<{ rules: Rule[] }> };
  return doc.groups.flatMap((g) => g.rules).filter((r) => typeof r.alert === 'string');
}

/** Runs every alert_rule_test of a test file; each verdict says what was expected and what fired. */
export function runRuleTests(path: string): Verdict[] {
  const file = parseYaml(readFileSync(path, 'utf8')) as RuleTestFile;
  const rules = file.rule_files.flatMap((f) => loadRules(resolve(dirname(path), f)));
  const evaluationMs = durationMs(file.evaluation_interval ?? '1m');
  const verdicts: Verdict[] = [];
  for (const [i, test] of file.tests.entries()) {
    const series = record(test.input_series, durationMs(test.interval ?? '1m'));
    for (const check of test.alert_rule_test) {
      const matching = rules.filter((r) => r.alert === check.alertname);
      if (matching.length === 0) throw new Error(`${path}: no rule alerts ${check.alertname}`);
      const fired = matching.flatMap((rule) => firingAt(rule, series, durationMs(check.eval_time), evaluationMs));
      verdicts.push({
        test: test.name ?? `test ${i + 1}`,
        alertname: check.alertname,
        evalTime: check.eval_time,
        expected: (check.exp_alerts ?? []).map((a) => ({ ...a.exp_labels, alertname: check.alertname })),
        fired,
      });
    }
  }
  return verdicts;
}

/** Labels sorted for an order-free comparison of alert lists. */
export function canonical(alerts: Labels[]): string[] {
  return alerts.map(labelKey).sort();
}
