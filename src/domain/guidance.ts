// How an agent connects to an endpoint and hears its doorbell, from one place: the MCP
// server name a client registers the endpoint under, and everything derived from it (the
// .mcp.json block, the `claude mcp add` line, Claude Code's channel flag and allowed-tools
// pattern, the stdio bridge, the troubleshooting page), plus how a client without a
// lasting session finishes its work (the lease token) and a recipe for trying the endpoint
// with the MCP Inspector CLI. Vend (API, CLI, board wizard), `switchboard endpoint
// connect`, /docs/doorbell and the self-test's hints all build on these functions, so the
// name a hint tells you to pass is the name the configuration registered. Pure.

/** The MCP server name an endpoint is registered under in a client: its slug. */
/**
 * `{[name]: entry}` typed as a record: a computed key's inferred type is emitted into the
 * declarations (dist/*.d.ts) as `[name]`, which a client of `switchboard/client` checking
 * its libraries (skipLibCheck off) would reject.
 */
function named<T>(name: string, entry: T): Record<string, T> {
  return { [name]: entry };
}

export function mcpServerName(slug: string): string {
  return slug;
}

/** Switchboard's own troubleshooting page for the doorbell (served by the board, public). */
export const TROUBLESHOOTING_PATH = '/docs/doorbell';

export function troubleshootingUrl(publicUrl: string): string {
  return `${publicUrl}${TROUBLESHOOTING_PATH}`;
}

/** Claude Code drops channel notifications unless the server is loaded as a channel. */
export function channelFlag(serverName: string): string {
  return `--dangerously-load-development-channels server:${serverName}`;
}

/** The tools pattern a woken session needs allowed, or it stops at a permission prompt. */
export function allowedTools(serverName: string): string {
  return `mcp__${serverName}`;
}

/** Stands where the bridge's credential file goes: the credential belongs in a file, not argv. */
export const CREDENTIAL_FILE_PLACEHOLDER = '<CREDENTIAL_FILE>';

/** Stands where the credential goes in guidance: the server keeps only its hash. */
export const CREDENTIAL_PLACEHOLDER = '<CREDENTIAL>';

/**
 * How a client that cannot keep an MCP session finishes what it claims (a CLI that opens
 * a session per call, a request without one): one sentence, the same everywhere.
 */
export const WITHOUT_SESSION =
  'A client that cannot keep an MCP session (a CLI that opens one per call, a request without one) still ' +
  'finishes its work: claim and claim_next answer a lease_token; pass it with the id to heartbeat, complete, ' +
  'fail or release from any later session or request.';

/** A guidance command with the credential in place of its placeholder (where vend shows it once). */
export function withCredential(command: string, credential: string): string {
  return command.replaceAll(CREDENTIAL_PLACEHOLDER, credential);
}

/** The MCP Inspector's CLI mode against an endpoint: one command per call, the bearer as a header. */
export function inspectorRecipe(publicUrl: string, credential: string) {
  const base =
    `npx @modelcontextprotocol/inspector --cli ${publicUrl}/mcp --transport http ` +
    `--header "Authorization: Bearer ${credential}"`;
  return {
    list_tools: `${base} --method tools/list`,
    claim_next: `${base} --method tools/call --tool-name claim_next --tool-arg wait_seconds=10`,
    complete: `${base} --method tools/call --tool-name complete --tool-arg id=<TODO_ID> lease_token=<LEASE_TOKEN>`,
  };
}

/** The .mcp.json block and the `claude mcp add` line for a credential text (real or a placeholder). */
export function clientConfig(publicUrl: string, slug: string, credential: string) {
  const name = mcpServerName(slug);
  const url = `${publicUrl}/mcp`;
  return {
    mcp_json: { mcpServers: named(name, { type: 'http', url, headers: { Authorization: `Bearer ${credential}` } }) },
    claude_mcp_add: `claude mcp add --transport http ${name} ${url} --header "Authorization: Bearer ${credential}"`,
  };
}

/**
 * The URL-only `.mcp.json` block for a client that signs in through OAuth (docs/design/
 * oauth.md): no credential in it; the client finds the authorization server from /mcp's
 * 401 and the person picks this endpoint on the consent page.
 */
export function oauthClientConfig(publicUrl: string, slug: string) {
  return { mcpServers: named(mcpServerName(slug), { type: 'http', url: `${publicUrl}/mcp` }) };
}

/** Doorbell guidance for an endpoint: the same in vend, connect, the hints and /docs/doorbell. */
export function connectGuidance(publicUrl: string, slug: string) {
  const name = mcpServerName(slug);
  const bridgeArgs = ['bridge', '--url', publicUrl, '--token-file', CREDENTIAL_FILE_PLACEHOLDER];
  return {
    server_name: name,
    claude_code: {
      command: `claude ${channelFlag(name)} --allowedTools ${allowedTools(name)}`,
      channel_flag: channelFlag(name),
      allowed_tools: allowedTools(name),
    },
    bridge: {
      command: `switchboard ${bridgeArgs.join(' ')}`,
      mcp_json: { mcpServers: named(name, { type: 'stdio', command: 'switchboard', args: bridgeArgs }) },
      note:
        'For clients that only speak stdio or do not take channel notifications over HTTP: the bridge is a ' +
        `stdio MCP server that forwards to ${publicUrl}/mcp, doorbells included. Put the credential on the ` +
        `first line of a file and name it in place of ${CREDENTIAL_FILE_PLACEHOLDER}.`,
    },
    without_doorbell:
      'A client that cannot take channel notifications at all waits for work with claim_next {wait_seconds} (a long poll).',
    without_session: WITHOUT_SESSION,
    inspector: inspectorRecipe(publicUrl, CREDENTIAL_PLACEHOLDER),
    troubleshooting_url: troubleshootingUrl(publicUrl),
  };
}

export type ConnectGuidance = ReturnType<typeof connectGuidance>;

/**
 * The Inspector recipe as plain-text lines; with the credential (vend shows it once) it
 * is filled in, else <CREDENTIAL> stands for it.
 */
export function inspectorText(g: ConnectGuidance, credential?: string): string {
  const fill = (command: string) => (credential === undefined ? command : withCredential(command, credential));
  return [
    `  ${g.without_session}`,
    `  Try it with the MCP Inspector CLI (each command is a session of its own):`,
    `    ${fill(g.inspector.list_tools)}`,
    `    ${fill(g.inspector.claim_next)}`,
    `    ${fill(g.inspector.complete)}`,
    ...(credential === undefined ? [`    (${CREDENTIAL_PLACEHOLDER}: the endpoint's credential)`] : []),
    '',
  ].join('\n');
}

/** The guidance as plain-text lines, for the CLI's vend and connect output. */
export function guidanceText(g: ConnectGuidance): string {
  return [
    `  Claude Code hears the doorbell only with the channel flag, and a woken session needs the tools allowed:`,
    `    ${g.claude_code.command}`,
    `  Clients that only speak stdio or do not take channel notifications: use the stdio bridge,`,
    `    ${g.bridge.command}`,
    `    (${CREDENTIAL_FILE_PLACEHOLDER}: a file with the credential on its first line)`,
    `  Without channels at all: wait for work with claim_next {wait_seconds}.`,
    `  Troubleshooting: ${g.troubleshooting_url}`,
    '',
  ].join('\n');
}
