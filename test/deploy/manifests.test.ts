// Pins what the deploy files promise (docs/deploy.md) without a container runtime: every
// stop grace outlasts the longest long-poll, the probes point at /readyz and /healthz, the
// PodMonitor scrapes /metrics with the token the pods get, the compose file's secrets step
// generates its secrets once, and the Containerfile carries nothing of this machine's.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { MAX_WAIT_SECONDS } from '../../src/domain/todo.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFile(join(ROOT, path), 'utf8');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are checked field by field
type Doc = any;

function seconds(text: string): number {
  const match = /^(\d+)s$/.exec(text);
  assert.ok(match, `"${text}" is not a duration in seconds`);
  return Number(match[1]);
}

test('every stop grace is longer than the longest long-poll', async () => {
  const compose: Doc = parse(await read('deploy/compose.yaml'));
  assert.ok(seconds(compose.services.switchboard.stop_grace_period) > MAX_WAIT_SECONDS);

  const deployment: Doc = parse(await read('deploy/kubernetes/deployment.yaml'));
  const pod = deployment.spec.template.spec;
  const preStop = Number(pod.containers[0].lifecycle.preStop.exec.command[1]);
  assert.ok(pod.terminationGracePeriodSeconds > MAX_WAIT_SECONDS + preStop);

  const unit = await read('deploy/systemd/switchboard.service');
  assert.ok(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]) > MAX_WAIT_SECONDS);
  assert.match(unit, /^KillSignal=SIGTERM$/m);
  // SIGTERM to the server alone: it stops the embedded PostgreSQL itself, after its work.
  assert.match(unit, /^KillMode=mixed$/m);
});

test('the Kubernetes pods are probed on /readyz and /healthz and scraped on /metrics with their own token', async () => {
  const deployment: Doc = parse(await read('deploy/kubernetes/deployment.yaml'));
  const container = deployment.spec.template.spec.containers[0];
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  const port = container.ports[0].name;
  assert.equal(container.readinessProbe.httpGet.port, port);
  assert.equal(container.livenessProbe.httpGet.port, port);
  const env = container.env as Doc[];
  const tokenRef = env.find((e) => e.name === 'SWITCHBOARD_METRICS_TOKEN').valueFrom.secretKeyRef;

  const monitor: Doc = parse(await read('deploy/kubernetes/podmonitor.yaml'));
  assert.equal(monitor.kind, 'PodMonitor');
  assert.deepEqual(monitor.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
  const endpoint = monitor.spec.podMetricsEndpoints[0];
  assert.equal(endpoint.port, port);
  assert.equal(endpoint.path, '/metrics');
  assert.deepEqual(endpoint.authorization.credentials, tokenRef);
  // The example alerts select job="switchboard".
  assert.equal(deployment.spec.template.metadata.labels[monitor.spec.jobLabel], 'switchboard');
  assert.match(await read('deploy/prometheus/alerts.yml'), /job="switchboard"/);

  const kustomization: Doc = parse(await read('deploy/kubernetes/kustomization.yaml'));
  assert.ok((kustomization.resources as string[]).includes('podmonitor.yaml'));
});

test("the compose file's secrets step generates the database password and the metrics token once", async () => {
  const compose: Doc = parse(await read('deploy/compose.yaml'));
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-compose-secrets-'));
  after(() => rm(dir, { recursive: true, force: true }));
  // Compose turns `$$` into `$`; the volume is mounted at /secrets.
  const script = (compose.services.secrets.command[0] as string).replaceAll('$$', '$').replaceAll('/secrets', dir);
  const generate = () => {
    const ran = spawnSync('sh', ['-ec', script], { encoding: 'utf8' });
    assert.equal(ran.status, 0, ran.stderr);
  };
  generate();
  const first = [
    await readFile(join(dir, 'postgres-password'), 'utf8'),
    await readFile(join(dir, 'metrics-token'), 'utf8'),
  ];
  for (const secret of first) assert.match(secret, /^[0-9a-f]{64}$/);
  assert.notEqual(first[0], first[1]);
  generate();
  assert.deepEqual(
    [await readFile(join(dir, 'postgres-password'), 'utf8'), await readFile(join(dir, 'metrics-token'), 'utf8')],
    first,
  );

  const serve = compose.services.switchboard.command[0] as string;
  assert.match(serve, /SWITCHBOARD_DATABASE_URL=.*\/secrets\/postgres-password/);
  assert.match(serve, /SWITCHBOARD_METRICS_TOKEN=.*\/secrets\/metrics-token/);
  assert.match(serve, /exec node bin\/switchboard\.js serve/);
  assert.ok(Number(/^postgres:(\d+)/.exec(compose.services.postgres.image)?.[1]) >= 15);
});

test('the Containerfile defaults to the official Node 24 slim base and carries no CA bundle of this machine', async () => {
  const file = await read('deploy/Containerfile');
  assert.match(file, /^ARG BASE=node:24-bookworm-slim$/m);
  assert.doesNotMatch(file, /NODE_EXTRA_CA_CERTS|host-ca/);
  assert.match(file, /npm ci --omit=dev --omit=optional/);
  const ignore = await read('.dockerignore');
  assert.match(ignore, /^\*$/m);
});
