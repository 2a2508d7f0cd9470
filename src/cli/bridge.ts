// `switchboard bridge`: a stdio MCP server that forwards to a remote /mcp (src/bridge),
// for clients that load channels only from stdio servers. This file owns the flags, the
// credential file, stderr logging and the process lifecycle: it runs until stdin closes
// (the client went away) or a signal, then ends the remote session and exits 0.
// stdout is the protocol channel: nothing but the transport may write to it.

import { readFile } from 'node:fs/promises';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';
import { Bridge } from '../bridge/bridge.js';
import { CliError, EXIT } from './exit.js';
import { exclusive, oneLineErrors, run } from './flags.js';

interface BridgeFlags {
  url: string;
  json?: boolean;
  token?: string;
  tokenFile?: string;
}

const CREDENTIAL_PREFIX = 'sbk_';

function usage(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** The server's MCP URL: `--url` as given when it already ends in /mcp, else with /mcp appended. */
export function mcpUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`--url: "${value}" is not a URL such as https://switchboard.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usage(`--url: must be an http(s) URL, not ${value}`);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/mcp') ? path : `${path}/mcp`;
  return url;
}

/** The credential from --token or --token-file (first line, trimmed); exactly one must be given. */
export async function credential(flags: BridgeFlags): Promise<string> {
  exclusive(['--token', flags.token], ['--token-file', flags.tokenFile]);
  if (flags.token !== undefined) {
    if (!flags.token.startsWith(CREDENTIAL_PREFIX)) throw usage(`--token: must be an endpoint credential (sbk_…)`);
    return flags.token;
  }
  if (flags.tokenFile === undefined) throw usage('--token or --token-file: one is required');
  let text: string;
  try {
    text = await readFile(flags.tokenFile, 'utf8');
  } catch (err) {
    throw usage(`--token-file: cannot read ${flags.tokenFile} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const token = text.split('\n')[0]?.trim() ?? '';
  if (!token.startsWith(CREDENTIAL_PREFIX)) {
    throw usage(`--token-file: ${flags.tokenFile} does not hold an endpoint credential (sbk_…)`);
  }
  return token;
}

async function serveBridge(flags: BridgeFlags): Promise<void> {
  const url = mcpUrl(flags.url);
  const token = await credential(flags);
  // stdout is the protocol; what the bridge has to say goes to stderr, as JSON lines with --json.
  const log = (line: string) =>
    process.stderr.write(
      flags.json
        ? JSON.stringify({ time: new Date().toISOString(), source: 'bridge', msg: line }) + '\n'
        : `switchboard bridge: ${line}\n`,
    );
  const bridge = new Bridge({ url, token, log });
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    log(`${why}; closing the session`);
    bridge.stop().then(
      () => process.exit(EXIT.ok),
      (err: unknown) => {
        log(`stopping failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(EXIT.failure);
      },
    );
  };
  process.stdin.on('end', () => stop('stdin closed'));
  process.stdin.on('close', () => stop('stdin closed'));
  process.stdout.on('error', () => stop('stdout closed'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  await bridge.start(new StdioServerTransport(process.stdin, process.stdout));
  log(`serving stdio, forwarding to ${url.href}`);
}

export function registerBridge(program: Command): void {
  oneLineErrors(
    program
      .command('bridge')
      .description('serve MCP on stdio and forward it, doorbells included, to a Switchboard server')
      .requiredOption('--url <URL>', 'the Switchboard server (its base URL, or the /mcp URL)')
      .option('--token <CREDENTIAL>', 'the endpoint credential (sbk_…); visible to `ps`, prefer --token-file')
      .option('--token-file <PATH>', 'a file holding the endpoint credential on its first line')
      .option('--json', 'write what the bridge says on stderr (and its errors) as JSON lines'),
  ).action(run(serveBridge));
}
