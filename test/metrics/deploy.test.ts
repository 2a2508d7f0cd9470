// Pins the example Prometheus alert rules and Grafana dashboard: the rules file has the
// shape `promtool check rules` requires, and every switchboard_* series either file
// names is one docs/metrics.md documents (so a renamed series cannot silently break them).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const documented = new Set([...read('docs/metrics.md').matchAll(/^\| `(switchboard_[a-z_]+)`/gm)].map((m) => m[1]));
const named = (text: string) => new Set([...text.matchAll(/\b(switchboard_[a-z_]+[a-z])\b/g)].map((m) => m[1] ?? ''));

interface Rule {
  alert?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

test('the alert rules are a valid rules file with the alerts the operators page on', () => {
  const rules = parse(read('deploy/prometheus/alerts.yml')) as { groups: Array<{ name: string; rules: Rule[] }> };
  assert.ok(Array.isArray(rules.groups) && rules.groups.length > 0);
  const alerts: string[] = [];
  for (const group of rules.groups) {
    assert.equal(typeof group.name, 'string');
    for (const rule of group.rules) {
      assert.equal(typeof rule.alert, 'string');
      assert.ok(typeof rule.expr === 'string' && rule.expr.trim() !== '', `${String(rule.alert)}: expr`);
      if (rule.for !== undefined) assert.match(String(rule.for), /^\d+[smhd]$/);
      assert.equal(typeof rule.annotations?.summary, 'string');
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
    'SwitchboardWorkPendingNothingClaimed',
  ]);
});

test('every series the alert rules and the dashboard use is documented', () => {
  for (const file of ['deploy/prometheus/alerts.yml', 'deploy/grafana/switchboard.json']) {
    const missing = [...named(read(file))].filter((name) => !documented.has(name));
    assert.deepEqual(missing, [], `${file} uses undocumented series`);
  }
  const dashboard = JSON.parse(read('deploy/grafana/switchboard.json')) as { panels: Array<{ targets: unknown[] }> };
  assert.ok(dashboard.panels.length >= 8 && dashboard.panels.every((p) => p.targets.length > 0));
});
