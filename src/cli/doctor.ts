// `switchboard doctor [ENDPOINT] [--wait 60s] [--json]`: checks this CLI against the server
// (reachability, /healthz, server vs CLI version, the saved sign-in) and lists endpoints
// and their sessions; with ENDPOINT it also runs the live doorbell self-test
// (docs/design/doorbell-acknowledgement.md). It acts as the signed-in human and never
// asks for an endpoint credential. Exit 0 only when every check passed and, with
// ENDPOINT, the verdict is `pass`. A warning (an endpoint whose live sessions hold no
// notification stream, so no doorbell can reach them) is reported, not failed: an agent
// that waits with claim_next wait_seconds needs no stream, and one without a lasting
// session settles with the lease token its claim answered.

import type { Command } from 'commander';
import type { DoorbellReport, EndpointList, EndpointShown } from '../client/index.js';
import { parseDuration } from '../config/duration.js';
import { versionInfo, type VersionInfo } from '../version.js';
import { ApiError, apiClient, resolveTarget, unreachable, type ApiClient } from './client.js';
import { renderReport, runSelfTest } from './doctor-test.js';
import { endpointPath } from './endpoint.js';
import { CliError, EXIT } from './exit.js';
import { apiCommand, run, type CommonOptions } from './flags.js';
import { channelFlag, mcpServerName, WITHOUT_SESSION } from '../domain/guidance.js';
import { clean, emit, table } from './output.js';

interface DoctorOptions extends CommonOptions {
  wait: string;
}

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** A warning: not ok, but it does not fail the run. */
  severity?: 'warning';
}

/** A live MCP session as GET /api/v1/endpoints/{ref} lists it (`had_stream`: absent from a server older than it). */
type Session = EndpointShown['sessions'][number];

/** Never opened a stream and never asked for doorbells: it pulls its work, nothing is wrong. */
const pullsOnly = (s: Session) => !s.stream_open && s.had_stream === false && !s.channel;

const streamCell = (s: Session) => (s.stream_open ? 'open' : pullsOnly(s) ? 'pulls (no stream)' : 'none');

interface Answer {
  url: string;
  cli_version: string;
  server_version: string | null;
  checks: Check[];
  endpoints: Array<{ slug: string; state: string; sessions: Session[] }>;
  doorbell_test: DoorbellReport | null;
  ok: boolean;
}

export function registerDoctor(program: Command): void {
  apiCommand(program, 'doctor', 'check the CLI, the server and your sign-in; with ENDPOINT, test its doorbell live')
    .argument('[ENDPOINT]', 'slug or id of one of your endpoints to self-test')
    .option('--wait <DURATION>', 'how long the agent has to claim the test doorbell, 10s–300s', '60s')
    .action(run(doctor));
}

/** --wait as whole seconds from 10 to 300 ("90s", "2m", or a bare number of seconds). */
export function waitSeconds(text: string): number {
  const ms = /^\d+$/.test(text.trim()) ? Number(text) * 1000 : parseDuration(text);
  if (ms === null || ms < 10_000 || ms > 300_000 || ms % 1000 !== 0)
    throw new CliError(`--wait: "${text}" must be a duration from 10s to 300s, e.g. 60s or 2m`, EXIT.usage);
  return ms / 1000;
}

async function serverChecks(url: string, cli: VersionInfo, checks: Check[]): Promise<string | null> {
  try {
    const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    checks.push({ name: 'reachable', ok: true, detail: `${url} answers` });
    checks.push({ name: 'healthz', ok: health.ok, detail: `/healthz answered HTTP ${health.status}` });
  } catch (err) {
    checks.push({ name: 'reachable', ok: false, detail: unreachable(url, err).message });
    return null;
  }
  const server = await apiClient(url, null)
    .request<VersionInfo>('GET', '/version')
    .catch(() => null);
  const same = server?.version === cli.version;
  checks.push({
    name: 'version',
    ok: same,
    detail: server
      ? `server ${server.version}, this CLI ${cli.version}${same ? '' : ': upgrade the older one'}`
      : 'the server did not say its version: is it a Switchboard?',
  });
  return server?.version ?? null;
}

async function signedIn(client: ApiClient | null, url: string, checks: Check[]): Promise<boolean> {
  if (!client) {
    checks.push({ name: 'credentials', ok: false, detail: `not signed in: run \`switchboard login --url ${url}\`` });
    return false;
  }
  try {
    const me = await client.request<{ human: { email: string; role: string } }>('GET', '/api/v1/whoami');
    checks.push({ name: 'credentials', ok: true, detail: `signed in as ${me.human.email} (${me.human.role})` });
    return true;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    checks.push({ name: 'credentials', ok: false, detail: err.message });
    return false;
  }
}

async function endpointsOf(client: ApiClient, ref: string | undefined): Promise<Answer['endpoints']> {
  const refs = ref
    ? [ref]
    : (await client.request<EndpointList>('GET', '/api/v1/endpoints')).endpoints
        .filter((e) => e.state === 'active')
        .map((e) => e.slug);
  const out: Answer['endpoints'] = [];
  for (const r of refs.slice(0, 50)) {
    const shown = await client.request<EndpointShown>('GET', endpointPath(r));
    out.push({ slug: shown.endpoint.slug, state: shown.endpoint.state, sessions: shown.sessions });
  }
  return out;
}

async function doctor(ref: string | undefined, opts: DoctorOptions): Promise<void> {
  const wait = waitSeconds(opts.wait);
  const cli = versionInfo();
  const target = await resolveTarget(opts.url);
  const answer: Answer = {
    url: target.url,
    cli_version: cli.version,
    server_version: null,
    checks: [],
    endpoints: [],
    doorbell_test: null,
    ok: false,
  };
  answer.server_version = await serverChecks(target.url, cli, answer.checks);
  const client = target.token === null ? null : apiClient(target.url, target.token);
  const reachable = answer.checks.find((c) => c.name === 'reachable')?.ok === true;
  if (reachable && (await signedIn(client, target.url, answer.checks)) && client) {
    answer.endpoints = await endpointsOf(client, ref);
    answer.checks.push(...streamWarnings(answer.endpoints));
    if (ref) answer.doorbell_test = await runSelfTest(client, ref, wait);
  }
  answer.ok =
    answer.checks.every((c) => c.ok || c.severity === 'warning') && (!ref || answer.doorbell_test?.verdict === 'pass');
  emit(opts.json, answer, render);
  if (!answer.ok) process.exitCode = EXIT.failure;
}

/**
 * Endpoints with live sessions of which none holds the notification stream (GET /mcp):
 * doorbells have nowhere to go, so work waits until an agent happens to call claim_next.
 * Sessions that only pull (never a stream, no doorbell asked for) are not a problem.
 */
export function streamWarnings(endpoints: Answer['endpoints']): Check[] {
  return endpoints
    .filter((e) => e.sessions.some((s) => !pullsOnly(s)) && !e.sessions.some((s) => s.stream_open))
    .map((e) => ({
      name: 'stream',
      ok: false,
      severity: 'warning' as const,
      detail:
        `endpoint ${e.slug}: ${e.sessions.length} live session(s), none holds the notification stream, ` +
        'so no doorbell reaches it. Connect a client that opens the stream and loads channels ' +
        `(e.g. \`claude ${channelFlag(mcpServerName(e.slug))}\`), or run it through ` +
        '`switchboard bridge`; or have the agent wait for work with `claim_next` and `wait_seconds`. ' +
        WITHOUT_SESSION,
    }));
}

/** Verdicts a client without a lasting session or stream gets: it is not connected when the doorbell rings. */
const UNCONNECTED: ReadonlySet<string> = new Set(['no_session', 'no_stream']);

/** For a client that opens a session per call (a CLI, a script): how it finishes its work, and a way to try it. */
function sessionlessLines(): string[] {
  return [
    `  ${WITHOUT_SESSION}`,
    '  `switchboard endpoint connect ENDPOINT` prints MCP Inspector CLI commands to try the endpoint that way.',
  ];
}

function render(answer: Answer): string {
  const out = answer.checks.map(
    (c) => `${c.ok ? 'ok  ' : c.severity === 'warning' ? 'WARN' : 'FAIL'}  ${c.name.padEnd(11)} ${clean(c.detail)}`,
  );
  for (const e of answer.endpoints) {
    out.push('', `endpoint ${e.slug} (${e.state}): ${e.sessions.length} live session(s)`);
    const rows = table(e.sessions, [
      { header: 'SESSION', value: (s) => s.id },
      { header: 'CLIENT', value: (s) => `${s.client_name ?? '?'} ${s.client_version ?? ''}`.trim(), max: 40 },
      { header: 'STREAM', value: streamCell },
      { header: 'DOORBELLS', value: (s) => (s.unheard ? 'delivered, not heard' : 'ok') },
    ]);
    out.push(rows.trimEnd());
  }
  if (answer.doorbell_test) out.push('', renderReport(answer.doorbell_test).trimEnd());
  if (answer.doorbell_test && UNCONNECTED.has(answer.doorbell_test.verdict)) out.push(...sessionlessLines());
  const warned = answer.checks.some((c) => !c.ok && c.severity === 'warning');
  out.push(
    '',
    !answer.ok
      ? 'doctor: problems found (see above)'
      : warned
        ? 'doctor: no failures, but see the warnings above'
        : 'doctor: all good',
  );
  return out.join('\n') + '\n';
}
