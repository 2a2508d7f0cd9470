// Evaluates deploy/prometheus/alerts.yml against recorded series, promtool-style: each
// scenario in test/metrics/rules/*.yml feeds series sampled every minute and says which
// alerts must be FIRING at an evaluation time (after their `for:`). Every alert needs a
// scenario that pages and a healthy one that stays silent. The evaluator
// (rules/promql.ts) implements only the PromQL the rules use; a rule reaching past it
// fails here with "unsupported PromQL", never silently.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { canonical, expandValues, firingAt, loadRules, runRuleTests, seriesLabels } from './rules/harness.js';
import { evaluate, parse, type Series } from './rules/promql.js';

const dir = fileURLToPath(new URL('./rules/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.yml'));
const rules = loadRules(fileURLToPath(new URL('../../deploy/prometheus/alerts.yml', import.meta.url)));
const verdicts = files.flatMap((f) => runRuleTests(`${dir}${f}`).map((v) => ({ ...v, file: f })));

for (const v of verdicts) {
  const expectation = v.expected.length === 0 ? 'stays silent' : 'fires';
  test(`${v.file}: ${v.test}: ${v.alertname} ${expectation} at ${v.evalTime}`, () => {
    assert.deepEqual(canonical(v.fired), canonical(v.expected));
  });
}

test('every alert of the rules file has a scenario that pages and a healthy one that stays silent', () => {
  assert.ok(rules.length >= 11, 'the rules file has its alerts');
  for (const rule of rules) {
    const mine = verdicts.filter((v) => v.alertname === rule.alert);
    assert.ok(
      mine.some((v) => v.expected.length > 0),
      `${rule.alert}: no scenario where it fires`,
    );
    const firingTests = new Set(mine.filter((v) => v.expected.length > 0).map((v) => `${v.file}/${v.test}`));
    assert.ok(
      mine.some((v) => v.expected.length === 0 && !firingTests.has(`${v.file}/${v.test}`)),
      `${rule.alert}: no healthy scenario where it stays silent`,
    );
  }
});

const at = (values: string, labels: string, intervalMs = 60_000): Series => ({
  labels: seriesLabels(labels),
  points: expandValues(values).flatMap((v, i) => (v === '_' ? [] : [{ t: i * intervalMs, v }])),
});
const samples = (expr: string, series: Series[], t: number) => {
  const value = evaluate(parse(expr), series, t);
  assert.equal(value.kind, 'vector');
  return value.kind === 'vector' ? value.samples : [];
};

test('the evaluator refuses PromQL it does not implement instead of guessing', () => {
  for (const expr of [
    'sum without (instance) (up)',
    'a > on (x) group_left b',
    'a / ignoring (x) b',
    'up offset 5m',
    'rate(x[5m]) % 2',
    'label_replace(up, "a", "$1", "b", "(.*)")',
    'topk(3, up)',
    'max_over_time(up[5m:1m])',
    'up > bool 0',
    'up @ 100',
  ])
    assert.throws(() => parse(expr), /unsupported PromQL/, expr);
});

test('increase() extrapolates to the window as Prometheus does, resets included', () => {
  // 1 a minute; (5m, 10m] holds 6..10: a rise of 4 over 4 minutes, extrapolated to the
  // window's start (one interval away) — Prometheus answers 5.
  const counter = at('0+1x10', 'c{instance="a"}');
  assert.deepEqual(samples('increase(c[5m])', [counter], 10 * 60_000), [{ labels: { instance: 'a' }, v: 5 }]);
  // A restart to 0 counts from 0: 6, 7, 0, 1, 2 rose by 1 + 0 + 1 + 1 = 3 over 4 minutes,
  // extrapolated by 5/4 (to the window's start; its end is the last sample).
  const reset = at('0+1x7 0+1x2', 'c{instance="a"}');
  assert.deepEqual(samples('increase(c[5m])', [reset], 10 * 60_000), [{ labels: { instance: 'a' }, v: 3 * 1.25 }]);
  assert.deepEqual(samples('rate(c[5m])', [counter], 10 * 60_000), [{ labels: { instance: 'a' }, v: 5 / 300 }]);
});

test('histogram_quantile interpolates within the bucket holding the rank', () => {
  const buckets = ['60', '300', '900', '+Inf'].map((le, i) =>
    at(i === 0 ? '0x5' : i === 1 ? '0+1x5' : '0+4x5', `h_bucket{le="${le}",queue="q"}`),
  );
  // Per minute: 0 below 60 s, 1 in (60, 300], 3 in (300, 900]: the p50 rank 2 lies a third
  // into (300, 900].
  const [p50] = samples('histogram_quantile(0.5, sum by (le, queue) (rate(h_bucket[5m])))', buckets, 5 * 60_000);
  assert.deepEqual(p50?.labels, { queue: 'q' });
  assert.ok(Math.abs((p50?.v ?? NaN) - 500) < 1e-9, `p50 ${p50?.v}`);
});

test('absent() names the equality matchers; a selector sees a sample 5 minutes back, not a stale one', () => {
  assert.deepEqual(samples('absent(up{job="sb",instance=~"a.*"})', [], 0), [{ labels: { job: 'sb' }, v: 1 }]);
  const up = at('1', 'up{job="sb"}');
  assert.equal(samples('up', [up], 4 * 60_000).length, 1);
  assert.equal(samples('up', [up], 6 * 60_000).length, 0, 'past the 5 minute lookback');
  assert.equal(samples('up', [at('1 stale', 'up{job="sb"}')], 2 * 60_000).length, 0, 'after a staleness marker');
});

test('vector matching: on (…) keeps its labels, a duplicate match is an error, unless/or by signature', () => {
  const a = [at('5', 'x{sweep="r",instance="a"}'), at('7', 'x{sweep="s",instance="a"}')];
  const b = [at('3', 'y{sweep="r",instance="b"}')];
  assert.deepEqual(samples('x > on (sweep) y', [...a, ...b], 0), [{ labels: { sweep: 'r' }, v: 5 }]);
  assert.deepEqual(samples('x unless on (sweep) y', [...a, ...b], 0), [
    { labels: { __name__: 'x', sweep: 's', instance: 'a' }, v: 7 },
  ]);
  assert.equal(samples('x or on (sweep) y', [...a, ...b], 0).length, 2);
  const twice = [...a, at('1', 'y{sweep="r",instance="c"}'), ...b];
  assert.throws(() => samples('x > on (sweep) y', twice, 0), /many-to-many/);
});

test('an alert fires only once its expression held at every evaluation for its for:', () => {
  const rule = { alert: 'Lag', expr: 'lag > 1', for: '5m', labels: { severity: 'warning' } };
  const held = [at('0 2 2 2 2 2 2', 'lag{instance="a"}')];
  assert.deepEqual(firingAt(rule, held, 5 * 60_000, 60_000), [], 'held 4 minutes: pending');
  assert.deepEqual(firingAt(rule, held, 6 * 60_000, 60_000), [
    { instance: 'a', severity: 'warning', alertname: 'Lag' },
  ]);
  const broken = [at('0 2 2 2 0 2 2 2 2', 'lag{instance="a"}')];
  assert.deepEqual(firingAt(rule, broken, 8 * 60_000, 60_000), [], 'the dip at minute 4 restarted the clock');
});
