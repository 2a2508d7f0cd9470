// The self-test's remediation hints (docs/design/doorbell-acknowledgement.md, "Hints"):
// data, keyed by verdict and client family, so a renamed flag is a one-line change reviewed
// beside docs/doorbell.md, which renders the same table (a test keeps the two equal). Pure.
//
// The family comes from the clientInfo.name a session sent on initialize: Claude Code
// sends "claude-code" and Crush sends "crush" (its MCP client's Implementation name);
// anything else is "other".

export type Verdict = 'pending' | 'pass' | 'no_session' | 'no_stream' | 'write_failed' | 'unheard';
export type ClientFamily = 'claude-code' | 'crush' | 'other';

export const VERDICTS: readonly Verdict[] = ['pending', 'pass', 'no_session', 'no_stream', 'write_failed', 'unheard'];

export function clientFamily(name: string | null | undefined): ClientFamily {
  const n = (name ?? '').trim().toLowerCase();
  if (n === 'claude-code') return 'claude-code';
  if (n === 'crush') return 'crush';
  return 'other';
}

/** Where each hint list ends: the page that explains every verdict. */
export const TROUBLESHOOTING = 'Troubleshooting: docs/doorbell.md (the self-test verdicts and these hints)';

const CLAUDE_CODE_DEAF = [
  'Start Claude Code with --dangerously-load-development-channels server:switchboard; on Team/Enterprise with ' +
    'the plugin allowlisted, use --channels plugin:switchboard@<marketplace>',
  'Pass --allowedTools mcp__switchboard, or a woken session stops at a permission prompt',
  'claude -p cannot be woken: use a notify hook',
  'Under Harness, enable its development-channels auto-confirm (Harness ADR-0029)',
];

const OTHER_DEAF = [
  'Your client must support notifications/claude/channel and keep the notification stream open',
  'See the connect guide (switchboard endpoint connect ENDPOINT)',
];

const NO_SESSION = [
  'Nothing is connected to this endpoint. Check the MCP URL and credential; switchboard doctor lists attached sessions',
];

const WRITE_FAILED = ['The stream closed during the write. Retry; if it repeats, the client is dropping its stream'];

/** The table: verdict → family → hints. `pass` and `pending` have none. */
export const HINTS: Readonly<Record<Verdict, Readonly<Record<ClientFamily, readonly string[]>>>> = {
  pending: { 'claude-code': [], crush: [], other: [] },
  pass: { 'claude-code': [], crush: [], other: [] },
  unheard: { 'claude-code': CLAUDE_CODE_DEAF, crush: OTHER_DEAF, other: OTHER_DEAF },
  no_stream: { 'claude-code': CLAUDE_CODE_DEAF, crush: OTHER_DEAF, other: OTHER_DEAF },
  no_session: { 'claude-code': NO_SESSION, crush: NO_SESSION, other: NO_SESSION },
  write_failed: { 'claude-code': WRITE_FAILED, crush: WRITE_FAILED, other: WRITE_FAILED },
};

/** The hints for a verdict and the client names seen, plus the troubleshooting line when any apply. */
export function hintsFor(verdict: Verdict, clientName: string | null | undefined): string[] {
  const hints = HINTS[verdict][clientFamily(clientName)];
  return hints.length === 0 ? [] : [...hints, TROUBLESHOOTING];
}

/** The table as Markdown rows (verdict | client | hints), for docs/doorbell.md. */
export function hintsMarkdown(): string {
  const rows = ['| Verdict | Client | Hints |', '|---|---|---|'];
  for (const verdict of VERDICTS) {
    for (const family of ['claude-code', 'crush', 'other'] as const) {
      const hints = HINTS[verdict][family];
      rows.push(`| ${verdict} | ${family} | ${hints.length === 0 ? 'none' : hints.join(' · ')} |`);
    }
  }
  return rows.join('\n');
}
