// The self-test's remediation hints (docs/design/doorbell-acknowledgement.md, "Hints"):
// data, keyed by verdict and client family, so a renamed flag is a one-line change reviewed
// beside docs/doorbell.md, which renders the same table (a test keeps the two equal). Pure.
// The hints name the endpoint's MCP server and the troubleshooting page through
// src/domain/guidance.ts, the same functions vend and `endpoint connect` use.
//
// The family comes from the clientInfo.name a session sent on initialize: Claude Code
// sends "claude-code" and Crush sends "crush" (its MCP client's Implementation name);
// anything else is "other".

import { connectGuidance, type ConnectGuidance } from '../domain/guidance.js';

export type Verdict = 'pending' | 'pass' | 'no_session' | 'no_channel' | 'no_stream' | 'write_failed' | 'unheard';
export type ClientFamily = 'claude-code' | 'crush' | 'other';

export const VERDICTS: readonly Verdict[] = [
  'pending',
  'pass',
  'no_session',
  'no_channel',
  'no_stream',
  'write_failed',
  'unheard',
];

export function clientFamily(name: string | null | undefined): ClientFamily {
  const n = (name ?? '').trim().toLowerCase();
  if (n === 'claude-code') return 'claude-code';
  if (n === 'crush') return 'crush';
  return 'other';
}

/**
 * What the hints name: the endpoint's MCP server name and the troubleshooting page,
 * from src/domain/guidance.ts, so a hint says exactly what vend and connect configured.
 */
export type HintGuidance = Pick<ConnectGuidance, 'server_name' | 'claude_code' | 'bridge' | 'troubleshooting_url'>;

/** Stands for the server's URL where a hint is shown without it (the MCP verbs: see docs/doorbell.md). */
export const SERVER_URL_PLACEHOLDER = '<SWITCHBOARD_URL>';

/** Where each hint list ends: Switchboard's own page that explains every verdict. */
export const troubleshooting = (g: HintGuidance) =>
  `Troubleshooting: ${g.troubleshooting_url} (the doorbell, the self-test verdicts and these hints)`;

const bridgeHint = (g: HintGuidance) =>
  `For a client that only speaks stdio or does not take channel notifications over HTTP, run the stdio bridge ` +
  `as the MCP server ${g.server_name}: ${g.bridge.command}`;

const CLAUDE_CODE_DEAF = (g: HintGuidance) => [
  `Start Claude Code with ${g.claude_code.channel_flag} (${g.server_name} is the name this endpoint's MCP server ` +
    'is registered under), or it drops the doorbell silently',
  `Pass --allowedTools ${g.claude_code.allowed_tools}, or a woken session stops at a permission prompt`,
  'claude -p cannot be woken: use a notify hook',
  bridgeHint(g),
];

const OTHER_DEAF = (g: HintGuidance) => [
  'Your client must support notifications/claude/channel and keep the notification stream open',
  bridgeHint(g),
  'Without channels, wait for work with claim_next {wait_seconds} instead of the doorbell',
  'See the connect guide (switchboard endpoint connect ENDPOINT)',
];

const NO_SESSION = () => [
  'Nothing is connected to this endpoint. Check the MCP URL and credential; switchboard doctor lists attached sessions',
];

const WRITE_FAILED = () => [
  'The stream closed during the write. Retry; if it repeats, the client is dropping its stream',
];

const NONE = () => [];

type Hints = (g: HintGuidance) => string[];

/** The table: verdict → family → hints. `pass` and `pending` have none. */
export const HINTS: Readonly<Record<Verdict, Readonly<Record<ClientFamily, Hints>>>> = {
  pending: { 'claude-code': NONE, crush: NONE, other: NONE },
  pass: { 'claude-code': NONE, crush: NONE, other: NONE },
  unheard: { 'claude-code': CLAUDE_CODE_DEAF, crush: OTHER_DEAF, other: OTHER_DEAF },
  no_channel: { 'claude-code': CLAUDE_CODE_DEAF, crush: OTHER_DEAF, other: OTHER_DEAF },
  no_stream: { 'claude-code': CLAUDE_CODE_DEAF, crush: OTHER_DEAF, other: OTHER_DEAF },
  no_session: { 'claude-code': NO_SESSION, crush: NO_SESSION, other: NO_SESSION },
  write_failed: { 'claude-code': WRITE_FAILED, crush: WRITE_FAILED, other: WRITE_FAILED },
};

/** The guidance of an endpoint for its hints; without the server's URL, a placeholder stands for it. */
export function hintGuidance(slug: string, publicUrl: string | null): HintGuidance {
  return connectGuidance(publicUrl ?? SERVER_URL_PLACEHOLDER, slug);
}

/** The hints for a verdict and the client name seen, plus the troubleshooting line when any apply. */
export function hintsFor(verdict: Verdict, clientName: string | null | undefined, g: HintGuidance): string[] {
  const hints = HINTS[verdict][clientFamily(clientName)](g);
  return hints.length === 0 ? [] : [...hints, troubleshooting(g)];
}

/** The guidance docs/doorbell.md renders the table with: placeholders for the name and the URL. */
export const DOCS_GUIDANCE: HintGuidance = connectGuidance('{publicUrl}', '<server-name>');

/** The table as Markdown rows (verdict | client | hints), for docs/doorbell.md. */
export function hintsMarkdown(): string {
  const rows = ['| Verdict | Client | Hints |', '|---|---|---|'];
  for (const verdict of VERDICTS) {
    for (const family of ['claude-code', 'crush', 'other'] as const) {
      const hints = HINTS[verdict][family](DOCS_GUIDANCE);
      rows.push(`| ${verdict} | ${family} | ${hints.length === 0 ? 'none' : hints.join(' · ')} |`);
    }
  }
  return rows.join('\n');
}
