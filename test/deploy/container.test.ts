// Pins the container image (deploy/Containerfile, docs/deploy.md): built with rootful
// podman on a local Node 24 base, it refuses to start without a database naming both ways
// out, migrates and serves an external PostgreSQL, reports ready to its HEALTHCHECK, lets
// an agent claim a todo over MCP, and exits 0 on SIGTERM within its grace period.
// Skipped, saying why, where podman (as root) is not available.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { createPool } from '../../src/db/pool.js';
import { emptyDatabase } from '../helpers/db.js';
import { until } from '../helpers/wait.js';
import { connect, ok, vend } from '../mcp/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BASE = 'localhost/node24-slim';
const IMAGE = 'localhost/switchboard:test';
/**
 * SIGTERM to exit, as deploy/compose.yaml and the Kubernetes manifests allow it: longer
 * than the longest long-poll (60 s), though shutdown ends waiting calls at once.
 */
const GRACE_SECONDS = 90;
/** Waiting for the database and the first migrations; a bound against a hang. */
const READY_WAIT_MS = 120_000;

// podman here needs runc (crun cannot set rlimits in this sandbox), the cgroupfs manager,
// the host network (to reach the machine's PostgreSQL) and rlimits below the sandbox's
// hard limits (docs/deploy.md, "Testing the image on a machine without a registry").
const RUNC = '/usr/sbin/runc';
const PODMAN = ['--cgroup-manager=cgroupfs', ...(existsSync(RUNC) ? ['--runtime', RUNC] : [])];
const FLAGS = ['--network=host', '--ulimit', 'nofile=1024:4096', '--ulimit', 'nproc=1024:4096'];

function whyNot(): string | null {
  const version = spawnSync('podman', ['--version'], { encoding: 'utf8' });
  if (version.error || version.status !== 0) {
    return 'podman is not installed (apt-get install -y podman runc debootstrap; .ci/run does)';
  }
  if (process.getuid?.() !== 0) return 'the image is built with rootful podman, and this test is not running as root';
  return null;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs podman with the flags above; `progress` streams its output to ours. */
function podman(args: string[], o: { progress?: boolean } = {}): Promise<Ran> {
  return run('podman', [...PODMAN, ...args], o);
}

function run(command: string, args: string[], o: { progress?: boolean } = {}): Promise<Ran> {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (o.progress) process.stdout.write(chunk);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    if (o.progress) process.stdout.write(chunk);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function succeeded(ran: Ran, what: string): string {
  assert.equal(ran.code, 0, `${what} failed (exit ${ran.code}):\n${ran.stderr.slice(-4000)}`);
  return ran.stdout;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function commit(): string {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  return head.status === 0 ? head.stdout.trim() : 'unknown';
}

/** localhost/node24-slim (test/deploy/base-image.sh; a few minutes when missing), then the image. */
async function buildImage(revision: string): Promise<void> {
  process.stdout.write(`container test: making sure the base image ${BASE} exists (a few minutes when it is not)\n`);
  succeeded(await run('bash', [join(ROOT, 'test/deploy/base-image.sh')], { progress: true }), 'building the base');
  process.stdout.write(`container test: building ${IMAGE} from deploy/Containerfile (layers are cached)\n`);
  const started = Date.now();
  succeeded(
    await podman([
      'build',
      ...FLAGS,
      // The docker format keeps HEALTHCHECK (the OCI image format has no field for it).
      '--format',
      'docker',
      '--build-arg',
      `BASE=${BASE}`,
      '--build-arg',
      `COMMIT=${revision}`,
      '-f',
      'deploy/Containerfile',
      '-t',
      IMAGE,
      '.',
    ]),
    `podman build of ${IMAGE}`,
  );
  process.stdout.write(`container test: built ${IMAGE} in ${Math.round((Date.now() - started) / 1000)} s\n`);
}

/** What `docker inspect` shows of the image: the contract docs/deploy.md describes. */
interface ImageConfig {
  User: string;
  Env: string[];
  Entrypoint: string[];
  Cmd: string[];
  StopSignal?: string;
  Volumes?: Record<string, unknown>;
  Healthcheck?: { Test: string[] };
}

interface Inspected {
  Config: ImageConfig;
  /** podman shows the HEALTHCHECK here, Docker in Config. */
  Healthcheck?: { Test: string[] };
}

const skip = whyNot();
if (skip) process.stdout.write(`container test skipped: ${skip}\n`);

test(
  'the image refuses to start without a database, then serves an external PostgreSQL, lets an agent claim a todo over MCP and exits 0 on SIGTERM',
  skip ? { skip } : {},
  async () => {
    const revision = commit();
    await buildImage(revision);

    const inspected = JSON.parse(
      succeeded(await podman(['image', 'inspect', IMAGE]), 'podman image inspect'),
    ) as Inspected[];
    const config = inspected[0]?.Config;
    assert.ok(config);
    const healthcheck = inspected[0]?.Healthcheck ?? config.Healthcheck;
    assert.equal(config.User, 'node');
    assert.ok(config.Env.includes('SWITCHBOARD_LISTEN=0.0.0.0:8080'), config.Env.join(' '));
    assert.ok(config.Env.includes('SWITCHBOARD_DATA_DIR=/data'), config.Env.join(' '));
    assert.ok(config.Volumes && '/data' in config.Volumes);
    assert.match(healthcheck?.Test.join(' ') ?? '', /\/readyz/);
    assert.equal(config.StopSignal, 'SIGTERM');
    assert.deepEqual([...config.Entrypoint, ...config.Cmd], ['node', 'bin/switchboard.js', 'serve']);

    // Without SWITCHBOARD_DATABASE_URL: the embedded PostgreSQL is not in the image.
    const port = await freePort();
    const bare = await podman(['run', '--rm', ...FLAGS, '-e', `SWITCHBOARD_LISTEN=127.0.0.1:${port}`, IMAGE]);
    assert.equal(bare.code, 1, bare.stderr);
    assert.match(bare.stderr, /no embedded PostgreSQL/);
    assert.match(bare.stderr, /set SWITCHBOARD_DATABASE_URL/);
    assert.match(
      bare.stderr,
      /install the embedded one: `npm ci` \(or `npm install`\) in the Switchboard folder without --omit=optional/,
    );

    // An empty database of the file's own: the image applies the migrations itself.
    const databaseUrl = await emptyDatabase('container');
    const name = `switchboard-test-${randomBytes(4).toString('hex')}`;
    succeeded(
      await podman([
        'run',
        '--detach',
        '--name',
        name,
        ...FLAGS,
        // No timer for the HEALTHCHECK (podman schedules it through systemd, absent here):
        // the test runs it once itself below.
        '--health-interval=disable',
        // A read-only root, as deploy/kubernetes/deployment.yaml runs it: /data is a volume.
        '--read-only',
        '-e',
        `SWITCHBOARD_DATABASE_URL=${databaseUrl}`,
        '-e',
        `SWITCHBOARD_LISTEN=127.0.0.1:${port}`,
        '-e',
        'SWITCHBOARD_INSTANCE_ID=container-test',
        IMAGE,
      ]),
      'podman run',
    );
    after(async () => {
      await podman(['rm', '--force', '--time', '0', name]);
    });
    const running = async () =>
      (await podman(['inspect', '--format', '{{.State.Running}}', name])).stdout.trim() === 'true';
    const logs = async () => {
      const out = await podman(['logs', name]);
      return out.stdout + out.stderr;
    };

    const url = `http://127.0.0.1:${port}`;
    await until(
      async () => {
        if (!(await running())) assert.fail(`the container exited before it was ready:\n${await logs()}`);
        const res = await fetch(`${url}/readyz`).catch(() => null);
        return res?.status === 200;
      },
      '/readyz to answer 200',
      READY_WAIT_MS,
      250,
    );
    const health = await podman(['healthcheck', 'run', name]);
    assert.equal(health.code, 0, `the HEALTHCHECK failed: ${health.stdout}${health.stderr}`);
    const version = (await (await fetch(`${url}/version`)).json()) as { commit: string };
    assert.equal(version.commit, revision);

    // An endpoint vended in the database, and an agent on it over MCP.
    const pool = createPool({ url: databaseUrl, max: 2 });
    after(() => pool.end());
    const vended = await vend(pool);
    const agent = await connect(url, vended.credential, 'container-agent', { channel: false });
    const pushed = await ok(agent, 'create_todo', { queue: 'inbox', title: 'from the container test' });
    const claimed = await ok(agent, 'claim_next', { wait_seconds: 5 });
    assert.equal(claimed.todo?.id, pushed.todo.id, JSON.stringify(claimed));
    const done = await ok(agent, 'complete', { id: pushed.todo.id, lease_token: claimed.lease_token });
    assert.equal(done.todo.state, 'done');

    // SIGTERM with the session still open; podman sends SIGKILL only after the grace.
    succeeded(await podman(['stop', '--time', String(GRACE_SECONDS), name]), 'podman stop');
    const exitCode = (await podman(['inspect', '--format', '{{.State.ExitCode}}', name])).stdout.trim();
    const output = await logs();
    assert.equal(exitCode, '0', `the container did not exit 0 on SIGTERM:\n${output}`);
    assert.match(output, /"signal":"SIGTERM".*shutting down/);
  },
);
