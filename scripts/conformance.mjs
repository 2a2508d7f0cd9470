// The official MCP conformance suite (@modelcontextprotocol/conformance) against a real
// `serve`: a database of its own on SWITCHBOARD_TEST_DATABASE_URL's server, `serve` from
// dist/ with auth off on loopback, an endpoint vended through the API, and a loopback
// proxy that adds the endpoint's bearer (the suite sends none). Runs every server scenario
// that applies to a server without resources, prompts, logging or completions; the ones
// known to fail are listed in .ci/conformance-baseline.yml with the reason, and the suite
// itself fails a run where a listed one passes, so the list cannot go stale.
//
//   CONFORMANCE_BIN=path/to/conformance node scripts/conformance.mjs
//
// The suite needs Node ≥ 22: .ci/run installs it and runs this under its Node 24.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];
const BASELINE = join(root, '.ci', 'conformance-baseline.yml');

const admin = process.env.SWITCHBOARD_TEST_DATABASE_URL;
const bin = process.env.CONFORMANCE_BIN;
if (!admin || !bin) {
  process.stderr.write('conformance: set SWITCHBOARD_TEST_DATABASE_URL and CONFORMANCE_BIN\n');
  process.exit(2);
}

function free() {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function withAdmin(sql) {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

const database = `sb_conformance_${randomBytes(4).toString('hex')}`;
const url = new URL(admin);
url.pathname = `/${database}`;
await withAdmin(`CREATE DATABASE ${database}`);

const port = await free();
const base = `http://127.0.0.1:${port}`;
const serve = spawn(process.execPath, [join(root, 'bin', 'switchboard.js'), 'serve'], {
  env: {
    PATH: process.env.PATH,
    SWITCHBOARD_DATABASE_URL: url.toString(),
    SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
    SWITCHBOARD_AUTH: 'off',
    SWITCHBOARD_LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
let proxy = null;
let code = 0;
try {
  for (let i = 0; ; i++) {
    const ready = await globalThis.fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 120) throw new Error(`serve did not become ready at ${base}`);
    await sleep(500);
  }
  const vended = await globalThis.fetch(`${base}/api/v1/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'conformance', queues: ['inbox'] }),
  });
  if (vended.status !== 201) throw new Error(`vending an endpoint answered ${vended.status}`);
  const { credential } = await vended.json();

  // The suite speaks to the proxy; the proxy adds the bearer and keeps everything else,
  // Host and Origin included (dns-rebinding-protection sends foreign ones on purpose).
  const proxyPort = await free();
  proxy = http
    .createServer((req, res) => {
      const up = http.request(
        {
          host: '127.0.0.1',
          port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, authorization: `Bearer ${credential}` },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    })
    .listen(proxyPort, '127.0.0.1');

  for (const scenario of SCENARIOS) {
    process.stdout.write(`--- conformance: ${scenario}\n`);
    const run = spawn(
      process.execPath,
      [
        bin,
        'server',
        '--url',
        `http://127.0.0.1:${proxyPort}/mcp`,
        '--scenario',
        scenario,
        '--expected-failures',
        BASELINE,
      ],
      { stdio: 'inherit' },
    );
    const exit = await new Promise((done) => run.on('exit', (c) => done(c ?? 1)));
    if (exit !== 0) {
      process.stdout.write(`--- conformance: ${scenario} failed unexpectedly (exit ${exit})\n`);
      code = 1;
    }
  }
} catch (err) {
  process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
  code = 1;
} finally {
  proxy?.close();
  serve.kill('SIGTERM');
  await new Promise((done) => serve.on('exit', done));
  await withAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}
process.exit(code);
