// Pins the example Prometheus alert rules and Grafana dashboard: the rules file has the
// shape `promtool check rules` requires, and every switchboard_* series either file
// names is one docs/metrics.md documents (so a renamed series cannot silently break them),
// and every alert has its runbook entry in docs/metrics.md, "Alerts". What the rules
// compute is pinned by test/metrics/rules.test.ts.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { parse } from './rules/promql.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const documented = new Set([...read('docs/metrics.md').matchAll(/^\| `(switchboard_[a-z_]+)`/gm)].map((m) => m[1]));
/** Histogram families are documented by name; their `_bucket`, `_sum`, `_count` series count as documented. */
const histograms = new Set(
  [...read('docs/metrics.md').matchAll(/^\| `(switchboard_[a-z_]+)` *\| histogram /gm)].map((m) => m[1]),
);
/** The `### Name` entries of the "Alerts" section. */
const runbooks = new Set(
  [...(read('docs/metrics.md').split(/^## Alerts$/m)[1] ?? '').matchAll(/^### (\w+)$/gm)].map((m) => m[1] ?? ''),
);
const named = (text: string) => new Set([...text.matchAll(/\b(switchboard_[a-z_]+[a-z])\b/g)].map((m) => m[1] ?? ''));

interface Rule {
  alert?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

test('the alert rules are a valid rules file with the alerts the operators page on', () => {
  const rules = parseYaml(read('deploy/prometheus/alerts.yml')) as { groups: Array<{ name: string; rules: Rule[] }> };
  assert.ok(Array.isArray(rules.groups) && rules.groups.length > 0);
  const alerts: string[] = [];
  for (const group of rules.groups) {
    assert.equal(typeof group.name, 'string');
    for (const rule of group.rules) {
      assert.equal(typeof rule.alert, 'string');
      assert.ok(typeof rule.expr === 'string' && rule.expr.trim() !== '', `${String(rule.alert)}: expr`);
      if (rule.for !== undefined) assert.match(String(rule.for), /^\d+[smhd]$/);
      assert.equal(typeof rule.annotations?.summary, 'string');
      assert.equal(typeof rule.annotations?.description, 'string', `${String(rule.alert)}: description`);
      assert.equal(
        rule.annotations?.runbook,
        `docs/metrics.md, "Alerts": ${String(rule.alert)}`,
        `${String(rule.alert)}: runbook`,
      );
      assert.ok(runbooks.has(rule.alert as string), `${String(rule.alert)}: no runbook entry in docs/metrics.md`);
      assert.ok(['info', 'warning', 'critical'].includes(String(rule.labels?.severity)));
      let depth = 0;
      for (const c of rule.expr) depth += c === '(' ? 1 : c === ')' ? -1 : 0;
      assert.equal(depth, 0, `${rule.alert as string}: unbalanced parentheses`);
      alerts.push(rule.alert as string);
    }
  }
  assert.deepEqual(alerts.sort(), [
    'SwitchboardBudgetExhausted',
    'SwitchboardCollectionErrors',
    'SwitchboardDeadLetters',
    'SwitchboardDoorbellsUnheard',
    'SwitchboardEventLoopLag',
    'SwitchboardHookFailures',
    'SwitchboardInstanceDown',
    'SwitchboardPoolExhausted',
    'SwitchboardQueueWaitHigh',
    'SwitchboardSweepStalled',
    'SwitchboardWorkPendingNothingClaimed',
  ]);
  assert.deepEqual([...runbooks].sort(), alerts, 'a runbook entry for each alert, and no other');
});

test('every series the alert rules and the dashboard use is documented', () => {
  for (const file of ['deploy/prometheus/alerts.yml', 'deploy/grafana/switchboard.json']) {
    const missing = [...named(read(file))].filter(
      (name) => !documented.has(name) && !histograms.has(name.replace(/_(?:bucket|sum|count)$/, '')),
    );
    assert.deepEqual(missing, [], `${file} uses undocumented series`);
  }
  const dashboard = JSON.parse(read('deploy/grafana/switchboard.json')) as { panels: Array<{ targets: unknown[] }> };
  assert.ok(dashboard.panels.length >= 8 && dashboard.panels.every((p) => p.targets.length > 0));
});

test('the dashboard imports: unique panel ids, no overlapping panels, every query parses as PromQL', () => {
  const dashboard = JSON.parse(read('deploy/grafana/switchboard.json')) as {
    panels: Array<{
      id: number;
      title: string;
      gridPos: { x: number; y: number; w: number; h: number };
      targets: Array<{ refId: string; expr: string }>;
    }>;
  };
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  const cells = new Map<string, string>();
  for (const panel of dashboard.panels) {
    const { x, y, w, h } = panel.gridPos;
    assert.ok(x >= 0 && w > 0 && x + w <= 24 && h > 0, `${panel.title}: within Grafana's 24 columns`);
    for (let i = x; i < x + w; i++)
      for (let j = y; j < y + h; j++) {
        const taken = cells.get(`${i},${j}`);
        assert.equal(taken, undefined, `${panel.title} overlaps ${taken}`);
        cells.set(`${i},${j}`, panel.title);
      }
    const refIds = panel.targets.map((t) => t.refId);
    assert.equal(new Set(refIds).size, refIds.length, `${panel.title}: unique refIds`);
    // Grafana's variables stand for a duration and label regexes; with them filled in,
    // each query must be PromQL the rules' evaluator reads (the subset the rules use).
    for (const t of panel.targets) {
      const expr = t.expr.replaceAll('$__rate_interval', '5m').replace(/\$[a-z_]+/g, '.*');
      assert.doesNotThrow(() => parse(expr), `${panel.title}: ${t.expr}`);
    }
  }
});
