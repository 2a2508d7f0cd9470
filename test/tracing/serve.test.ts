// Pins tracing as `switchboard serve` runs it (docs/design/tracing.md): with no OTLP
// endpoint no OpenTelemetry module is even loaded and no log line names a trace; with
// one, spans reach a collector over OTLP/HTTP in the protocol asked for (JSON or
// protobuf) with the service name and the caller's trace, flushed by the shutdown; a
// protocol it does not speak is a configuration error naming the variable.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/index.js';
import { testDatabase } from '../helpers/db.js';

const { pool, url } = await testDatabase('tracing_serve');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');
const TRACE = fileURLToPath(new URL('../cli/fixtures/trace-imports.mjs', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'switchboard-tracing-'));
after(() => rm(scratch, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  assert.ok(address && typeof address === 'object');
  return address.port;
}

interface Posted {
  path: string;
  type: string;
  body: Buffer;
}

/** An OTLP/HTTP collector in the test process: records every POST and answers 200. */
async function collector(): Promise<{ endpoint: string; posts: Posted[] }> {
  const posts: Posted[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  after(() => server.close());
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  return { endpoint: `http://127.0.0.1:${address.port}`, posts };
}

/**
 * Runs serve with `vars`, sends one traced request, stops it with SIGTERM; what it logged,
 * the modules it loaded and the trace id it was sent.
 */
async function serveOnce(label: string, vars: Record<string, string>) {
  const port = await freePort();
  const imports = join(scratch, `${label}.txt`);
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_') && !k.startsWith('OTEL_')),
  );
  const child = spawn(process.execPath, ['--import', TRACE, BIN, 'serve'], {
    env: {
      ...env,
      SWITCHBOARD_DATABASE_URL: url,
      SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
      SWITCHBOARD_AUTH: 'off',
      SWITCHBOARD_INSTANCE_ID: `serve-${label}`,
      SWITCHBOARD_TEST_TRACE_IMPORTS: imports,
      ...vars,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const base = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ;) {
    const status = await fetch(`${base}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    assert.ok(Date.now() < deadline && child.exitCode === null, `serve ${label} did not become ready: ${out}${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const traceId = randomBytes(16).toString('hex');
  const res = await fetch(`${base}/api/v1/whoami`, {
    headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
  });
  assert.equal(res.status, 200);
  // A sweep tick ran here before the stop (its span is then in the flush).
  for (const deadline = Date.now() + 30_000; ;) {
    const ran = await pool.query('SELECT 1 FROM sweep_ticks WHERE instance = $1', [`serve-${label}`]);
    if (ran.rowCount) break;
    assert.ok(Date.now() < deadline, `serve ${label} ran no sweep`);
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, out + err);
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const modules = (await readFile(imports, 'utf8')).split('\n').filter(Boolean);
  return { lines, modules, traceId };
}

const otel = (modules: string[], pkg: string) => modules.some((m) => m.includes(`/@opentelemetry/${pkg}/`));

test('off: no OpenTelemetry module is loaded and no log line names a trace', async () => {
  const { lines, modules } = await serveOnce('off', {});
  assert.ok(
    modules.some((m) => m.includes('/main.js')),
    'the trace saw the server load',
  );
  assert.deepEqual(
    modules.filter((m) => m.includes('@opentelemetry')),
    [],
  );
  const request = lines.find((l) => l.msg === 'request' && l.route === '/api/v1/whoami');
  assert.ok(request, JSON.stringify(lines));
  assert.equal(request.level, 'info');
  assert.equal('trace_id' in request, false);
});

test('on, http/json: the request span reaches the collector, named by route, in the caller’s trace', async () => {
  const { endpoint, posts } = await collector();
  const { lines, modules, traceId } = await serveOnce('json', {
    OTEL_EXPORTER_OTLP_ENDPOINT: `${endpoint}/`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'switchboard-test',
  });
  assert.ok(otel(modules, 'sdk-trace-base') && otel(modules, 'exporter-trace-otlp-http'));
  assert.ok(!otel(modules, 'exporter-trace-otlp-proto'), 'only the exporter asked for');
  const traces = posts.filter((p) => p.path === '/v1/traces');
  assert.ok(traces.length > 0, `posts: ${posts.map((p) => p.path).join(', ')}`);
  assert.match(traces[0]?.type ?? '', /^application\/json/);
  type Json = {
    resourceSpans: Array<{
      resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
      scopeSpans: Array<{ spans: Array<{ name: string; traceId: string }> }>;
    }>;
  };
  const bodies = traces.map((p) => JSON.parse(p.body.toString('utf8')) as Json);
  const resources = bodies.flatMap((b) => b.resourceSpans);
  const attrs = Object.fromEntries((resources[0]?.resource.attributes ?? []).map((a) => [a.key, a.value.stringValue]));
  assert.equal(attrs['service.name'], 'switchboard-test');
  assert.equal(attrs['service.instance.id'], 'serve-json');
  const all = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  const request = all.find((s) => s.name === 'GET /api/v1/whoami');
  assert.ok(request, all.map((s) => s.name).join(', '));
  assert.equal(request.traceId, traceId);
  assert.ok(
    all.some((s) => s.name.startsWith('sweep ')),
    'sweep ticks are traced too',
  );
  const line = lines.find((l) => l.msg === 'request' && l.route === '/api/v1/whoami');
  assert.equal(line?.trace_id, traceId);
});

test('on, http/protobuf (the default): the spans are POSTed as protobuf', async () => {
  const { endpoint, posts } = await collector();
  const { modules, traceId } = await serveOnce('proto', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/custom` });
  assert.ok(otel(modules, 'exporter-trace-otlp-proto') && !otel(modules, 'exporter-trace-otlp-http'));
  const traces = posts.filter((p) => p.path === '/custom');
  assert.ok(traces.length > 0, `posts: ${posts.map((p) => p.path).join(', ')}`);
  assert.equal(traces[0]?.type, 'application/x-protobuf');
  const body = Buffer.concat(traces.map((p) => p.body));
  assert.ok(body.includes(Buffer.from('GET /api/v1/whoami')), 'the span name, as a protobuf string');
  assert.ok(body.includes(Buffer.from(traceId, 'hex')), 'the caller’s trace id, as bytes');
});

test('the OTLP settings: endpoints, protocol, service name; gRPC or a bad URL is an error naming the variable', () => {
  const off = parseConfig({});
  assert.ok(off.ok);
  assert.deepEqual(off.config.tracing, {
    enabled: false,
    protocol: 'http/protobuf',
    tracesUrl: null,
    serviceName: 'switchboard',
  });
  const general = parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' });
  assert.ok(general.ok);
  assert.equal(general.config.tracing.tracesUrl, 'http://collector:4318/v1/traces');
  assert.equal(general.config.tracing.enabled, true);
  const specific = parseConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.test/in',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
  });
  assert.ok(specific.ok);
  assert.equal(specific.config.tracing.tracesUrl, 'https://traces.example.test/in', 'used as given');
  assert.equal(specific.config.tracing.protocol, 'http/json', 'the signal-specific protocol wins');
  const grpc = parseConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
  });
  assert.ok(!grpc.ok);
  assert.match(grpc.problems.join('\n'), /^OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json/m);
  const badUrl = parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' });
  assert.ok(!badUrl.ok);
  assert.match(badUrl.problems.join('\n'), /^OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/m);
});

test('serve refuses to start with a protocol it does not speak, naming the variable', async () => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_') && !k.startsWith('OTEL_')),
  );
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, SWITCHBOARD_DATABASE_URL: url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.notEqual(code, 0);
  assert.match(err, /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json/);
});
