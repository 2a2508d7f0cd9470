// Pins the warnings `serve` logs at start about how it is exposed: a bind beyond loopback
// with neither a public URL nor allowed hosts serves any Host (docs/design/limits.md,
// "Host and Origin"), and says so loudly, naming both settings.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig, startWarnings } from '../../src/config/index.js';

const TOKEN = { SWITCHBOARD_METRICS_TOKEN: 'm'.repeat(32) };

function configOf(env: Record<string, string>) {
  const parsed = parseConfig(env);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
  return parsed.config;
}

test('a non-loopback bind without a public URL or allowed hosts warns, naming both settings', () => {
  for (const listen of ['0.0.0.0:8080', '[::]:8080', '10.0.0.5:8080']) {
    const warnings = startWarnings(configOf({ SWITCHBOARD_LISTEN: listen, ...TOKEN }));
    assert.equal(warnings.length, 1, listen);
    assert.match(warnings[0] ?? '', /SWITCHBOARD_PUBLIC_URL/);
    assert.match(warnings[0] ?? '', /SWITCHBOARD_ALLOWED_HOSTS/);
    assert.match(warnings[0] ?? '', /any Host/);
  }
});

test('a loopback bind, a public URL or allowed hosts give no warning', () => {
  assert.deepEqual(startWarnings(configOf({ SWITCHBOARD_LISTEN: '127.0.0.1:8080' })), []);
  const pub = { SWITCHBOARD_LISTEN: '0.0.0.0:8080', SWITCHBOARD_PUBLIC_URL: 'https://sb.example.com', ...TOKEN };
  assert.deepEqual(startWarnings(configOf(pub)), []);
  const hosts = { SWITCHBOARD_LISTEN: '0.0.0.0:8080', SWITCHBOARD_ALLOWED_HOSTS: 'sb.internal', ...TOKEN };
  assert.deepEqual(startWarnings(configOf(hosts)), []);
});
