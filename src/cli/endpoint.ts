// `switchboard endpoint vend|list|show|set|revoke|delete|connect`: an agent's endpoints over
// the REST API. Vend prints the credential once, with the .mcp.json block and the
// `claude mcp add` line; connect prints the same templates with a placeholder, because
// the server keeps only a hash of the credential. Both add how to hear the doorbell (the
// channel flag and allowed tools under the endpoint's MCP server name, the stdio bridge,
// the troubleshooting page), how a client without a lasting session finishes its work and
// an MCP Inspector recipe (src/domain/guidance.ts). Sessions and grants are the server's.

import type { Command } from 'commander';
import type {
  Deleted,
  Endpoint,
  EndpointList,
  EndpointOne,
  EndpointRevoked,
  EndpointRotated,
  EndpointShown,
  EndpointVended,
} from '../client/index.js';
import { parseDuration } from '../config/duration.js';
import { MAX_CREDENTIAL_GRACE_SECONDS, SLUG } from '../domain/endpoint.js';
import { signedInClient } from './client.js';
import { CliError, EXIT } from './exit.js';
import {
  apiCommand,
  asFlags,
  collect,
  futureTime,
  LEASE_BOUNDS,
  listFlag,
  oneLineErrors,
  oneOf,
  queueName,
  run,
  textFlag,
  wholeNumber,
  type CommonOptions,
} from './flags.js';
import {
  clientConfig,
  connectGuidance,
  CREDENTIAL_PLACEHOLDER,
  guidanceText,
  inspectorText,
  type ConnectGuidance,
} from '../domain/guidance.js';
import { emit, keyValues, objectsTable, section, table } from './output.js';

interface VendOptions extends CommonOptions {
  slug?: string;
  queue?: string[];
  verbs?: string;
  expiresAt?: string;
  lease?: string;
  acceptAgentMessages?: boolean;
}

interface SetOptions extends CommonOptions {
  acceptAgentMessages?: string;
  name?: string;
  lease?: string;
  addQueue?: string[];
  removeQueue?: string[];
}

export const endpointPath = (ref: string) => `/api/v1/endpoints/${encodeURIComponent(ref)}`;

export function registerEndpoint(program: Command): void {
  const group = oneLineErrors(program.command('endpoint').description("vend and manage agents' endpoints"));
  apiCommand(group, 'vend', 'create an endpoint and print its credential (shown once) and MCP config')
    .argument('<NAME>', 'a name for the agent, e.g. reviewer')
    .option('--slug <SLUG>', 'the slug to use (default: the name and a random suffix); unique on the server')
    .option('--queue <Q>', 'a queue the endpoint may use; repeat for more (default: inbox)', collect)
    .option('--verbs <LIST>', 'comma-separated verb or family names: drain, create, messages, admission, hooks')
    .option('--expires-at <T>', 'when the credential stops working, RFC 3339 (e.g. 2030-01-31T18:00:00Z)')
    .option('--lease <SECONDS>', `default lease for claims, ${LEASE_BOUNDS.min}–${LEASE_BOUNDS.max} seconds`)
    .option('--accept-agent-messages', "let your other endpoints' agents queue messages into its sessions")
    .action(run(vend));
  apiCommand(group, 'list', 'list your endpoints').action(run(list));
  apiCommand(group, 'show', 'show an endpoint and its sessions').argument('<REF>', 'slug or id').action(run(show));
  apiCommand(group, 'edit', "change an endpoint's name, default lease, queues or settings; the slug stays")
    .alias('set')
    .argument('<REF>', 'slug or id')
    .option('--name <NAME>', 'the display name (the slug, which clients are configured with, does not change)')
    .option(
      '--lease <SECONDS>',
      `default lease for claims, ${LEASE_BOUNDS.min}–${LEASE_BOUNDS.max} seconds; "default": the server's`,
    )
    .option('--add-queue <Q>', 'grant one more queue; repeat for more', collect)
    .option(
      '--remove-queue <Q>',
      'stop granting a queue (refused while it has live todos, schedules or webhooks); repeat for more',
      collect,
    )
    .option('--accept-agent-messages <on|off>', "whether your other endpoints' agents may message its sessions")
    .action(run(set));
  apiCommand(group, 'rotate', 'replace an endpoint’s credential, keeping its slug (.mcp.json and flags stay valid)')
    .argument('<REF>', 'slug or id')
    .option('--grace <DURATION>', 'how long the old credential still works, 0s–7d (default: the server’s, 1h)')
    .action(run(rotate));
  apiCommand(group, 'revoke', 'stop an endpoint at once; its live todos are dead-lettered')
    .argument('<REF>', 'slug or id')
    .action(run(revoke));
  apiCommand(group, 'delete', 'delete a revoked endpoint').argument('<REF>', 'slug or id').action(run(remove));
  apiCommand(group, 'connect', 'print how to connect an agent to an endpoint')
    .argument('<REF>', 'slug or id')
    .action(run(connect));
}

/** Checks the flags and builds the POST body; throws a usage error naming the bad flag. */
export function vendBody(name: string, opts: VendOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { name: textFlag('NAME', name, 200) };
  if (opts.slug !== undefined) {
    if (!SLUG.test(opts.slug))
      throw new CliError(
        `--slug: "${opts.slug}" must be 3–63 lowercase letters, digits and hyphens, starting and ending with a letter or digit`,
        EXIT.usage,
      );
    body.slug = opts.slug;
  }
  if (opts.queue) body.queues = opts.queue.map((q) => queueName('--queue', q));
  if (opts.verbs !== undefined) body.verbs = listFlag('--verbs', opts.verbs);
  if (opts.expiresAt !== undefined) body.expires_at = futureTime('--expires-at', opts.expiresAt);
  if (opts.lease !== undefined)
    body.default_lease_seconds = wholeNumber('--lease', opts.lease, LEASE_BOUNDS.min, LEASE_BOUNDS.max);
  if (opts.acceptAgentMessages === true) body.accept_agent_messages = true;
  return body;
}

/**
 * vend's and rotate's answer. The contract types `guidance` as an object; the CLI reads it
 * as src/domain/guidance.ts builds it (and a server older than the guidance leaves it out).
 */
type WithGuidance<T> = Omit<T, 'guidance'> & { guidance?: ConnectGuidance };
type VendAnswer = WithGuidance<EndpointVended>;
async function vend(name: string, opts: VendOptions): Promise<void> {
  const body = vendBody(name, opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<VendAnswer>('POST', '/api/v1/endpoints', body);
  emit(opts.json, answer, (a) =>
    [
      describe(a.endpoint),
      section(
        'Credential (shown once: it is not stored and cannot be shown again; copy it now):',
        `  ${a.credential}\n`,
      ),
      section('.mcp.json:', formatJsonBlock(a.mcp_json)),
      section('Claude Code:', `  ${a.claude_mcp_add}\n`),
      a.guidance ? section('Hearing the doorbell:', guidanceText(a.guidance)) : '',
      a.guidance?.inspector ? section('Without a lasting session:', inspectorText(a.guidance, a.credential)) : '',
    ].join(''),
  );
}

async function list(opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<EndpointList>('GET', '/api/v1/endpoints');
  emit(opts.json, answer, (a) =>
    table(
      a.endpoints,
      [
        { header: 'SLUG', value: (e) => e.slug },
        { header: 'NAME', value: (e) => e.name, max: 30 },
        { header: 'STATE', value: (e) => e.state },
        { header: 'QUEUES', value: (e) => e.queues, max: 30 },
        { header: 'LAST SEEN', value: (e) => e.last_seen_at },
        { header: 'CREATED', value: (e) => e.created_at },
      ],
      'no endpoints yet: create one with `switchboard endpoint vend NAME`',
    ),
  );
}

async function show(ref: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<EndpointShown>('GET', endpointPath(ref));
  emit(opts.json, answer, (a) => describe(a.endpoint) + section('Sessions:', objectsTable(a.sessions)));
}

/** Checks the flags of `edit` and builds the PATCH body; a usage error names the bad flag. */
export function editBody(opts: SetOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (opts.name !== undefined) body.name = textFlag('--name', opts.name, 80);
  if (opts.lease !== undefined)
    body.default_lease_seconds =
      opts.lease === 'default' ? null : wholeNumber('--lease', opts.lease, LEASE_BOUNDS.min, LEASE_BOUNDS.max);
  if (opts.addQueue) body.add_queues = opts.addQueue.map((q) => queueName('--add-queue', q));
  if (opts.removeQueue) body.remove_queues = opts.removeQueue.map((q) => queueName('--remove-queue', q));
  if (opts.acceptAgentMessages !== undefined)
    body.accept_agent_messages =
      oneOf('--accept-agent-messages', opts.acceptAgentMessages, ['on', 'off'] as const) === 'on';
  if (Object.keys(body).length === 0)
    throw new CliError(
      'name a setting to change: --name, --lease, --add-queue, --remove-queue or --accept-agent-messages',
      EXIT.usage,
    );
  return body;
}

async function set(ref: string, opts: SetOptions): Promise<void> {
  const body = editBody(opts);
  const client = await signedInClient(opts.url);
  const answer = await asFlags(client.request<EndpointOne>('PATCH', endpointPath(ref), body), {
    name: '--name',
    default_lease_seconds: '--lease',
    add_queues: '--add-queue',
    remove_queues: '--remove-queue',
    accept_agent_messages: '--accept-agent-messages',
  });
  emit(opts.json, answer, (a) => describe(a.endpoint));
}

/** The POST body of `rotate`: the grace in whole seconds when --grace is given. */
export function rotateBody(opts: { grace?: string }): Record<string, unknown> {
  if (opts.grace === undefined) return {};
  const ms = parseDuration(opts.grace);
  if (ms === null || ms < 0 || ms > MAX_CREDENTIAL_GRACE_SECONDS * 1000)
    throw new CliError(`--grace: "${opts.grace}" is not a duration from 0s to 7d, such as 0s, 15m or 2h`, EXIT.usage);
  return { grace_seconds: Math.round(ms / 1000) };
}

async function rotate(ref: string, opts: CommonOptions & { grace?: string }): Promise<void> {
  const body = rotateBody(opts);
  const client = await signedInClient(opts.url);
  const answer = await client.request<WithGuidance<EndpointRotated>>('POST', `${endpointPath(ref)}/rotate`, body);
  emit(opts.json, answer, (a) =>
    [
      `rotated ${a.endpoint.slug}: ${
        a.previous_valid_until
          ? `the old credential works until ${a.previous_valid_until}`
          : 'the old credential no longer works'
      }; the slug, .mcp.json's server name and the channel flag are unchanged\n`,
      section(
        'New credential (shown once: it is not stored and cannot be shown again; copy it now):',
        `  ${a.credential}\n`,
      ),
    ].join(''),
  );
}

async function revoke(ref: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<EndpointRevoked>('POST', `${endpointPath(ref)}/revoke`);
  emit(
    opts.json,
    answer,
    (a) => `revoked ${a.endpoint.slug}: its credential no longer works; ${a.dead_lettered} live todo(s) dead-lettered`,
  );
}

async function remove(ref: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<Deleted>('DELETE', endpointPath(ref));
  emit(opts.json, answer, () => `deleted endpoint ${ref}`);
}

async function connect(ref: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const shown = await client.request<WithGuidance<EndpointShown>>('GET', endpointPath(ref));
  const { endpoint } = shown;
  const templates = connectTemplates(client.url, endpoint.slug, CREDENTIAL_PLACEHOLDER);
  // The server's guidance names its public URL, as the self-test's hints do; what a server
  // older than the guidance (or than a part of it) leaves out is built here for the URL
  // this command uses.
  const guidance = { ...connectGuidance(client.url, endpoint.slug), ...shown.guidance };
  const answer = { endpoint, ...templates, guidance };
  emit(opts.json, answer, (a) =>
    [
      keyValues([
        ['endpoint', `${a.endpoint.slug} (${a.endpoint.state})`],
        ['MCP URL', a.mcp_url],
      ]),
      a.endpoint.state === 'active' ? '' : `\nThis endpoint is ${a.endpoint.state}: agents cannot connect to it.\n`,
      `\nReplace ${CREDENTIAL_PLACEHOLDER} with the credential printed once by \`switchboard endpoint vend\`.\n` +
        'It is not stored on the server; if it is lost, vend a new endpoint and revoke this one.\n',
      section('.mcp.json:', formatJsonBlock(a.mcp_json)),
      section('Claude Code:', `  ${a.claude_mcp_add}\n`),
      section('Hearing the doorbell:', guidanceText(a.guidance)),
      section('Without a lasting session:', inspectorText(a.guidance)),
    ].join(''),
  );
}

/** The MCP URL and the two ways to configure a client, for a given credential text. */
export function connectTemplates(url: string, slug: string, credential: string) {
  return { mcp_url: `${url}/mcp`, ...clientConfig(url, slug, credential) };
}

function describe(e: Endpoint): string {
  return keyValues([
    ['slug', e.slug],
    ['name', e.name],
    ['id', e.id],
    ['state', e.state],
    ['queues', e.queues],
    ['verbs', e.verbs],
    ['default lease', e.default_lease_seconds === null ? null : `${e.default_lease_seconds}s`],
    ['agent messages', e.accept_agent_messages === undefined ? null : e.accept_agent_messages ? 'accepted' : 'refused'],
    ['expires', e.expires_at],
    ['revoked', e.revoked_at],
    ['last seen', e.last_seen_at],
    ['created', e.created_at],
  ]);
}

function formatJsonBlock(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return text.endsWith('\n') ? text : text + '\n';
}
