// Pins that the doorbell guidance names the server the configuration registered: for one
// endpoint, the API's vend answer, the CLI's `endpoint vend` and `endpoint connect` (text
// and --json) and the self-test's Claude Code hints give the same MCP server name, channel
// flag, allowed-tools pattern and troubleshooting URL ({publicUrl}/docs/doorbell), and
// that name is the key of the vended .mcp.json and the name in `claude mcp add`. They also
// say how a client without a lasting session finishes its work (the lease token) and give
// an MCP Inspector CLI recipe for the endpoint, its credential filled in only by vend.

import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WITHOUT_SESSION } from '../../src/domain/guidance.js';
import { testDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/cli.js';
import { agent, api, expireTest, owner, ringOfTest, server, tool, until, verdictOf, type Body } from './world.js';

const PUBLIC_URL = 'http://switchboard-guidance.test';

const { pool, url } = await testDatabase('guidance');
const s = await server(url, 'guidance', { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL });
const me = await owner(pool);
const configHome = await mkdtemp(join(tmpdir(), 'switchboard-guidance-'));

async function cli(args: string[]) {
  const run = await runCli([...args, '--url', s.url], { XDG_CONFIG_HOME: configHome, SWITCHBOARD_TOKEN: me.token });
  assert.equal(run.code, 0, run.stderr);
  return run.stdout;
}

interface Guidance {
  server_name: string;
  claude_code: { command: string; channel_flag: string; allowed_tools: string };
  bridge: { command: string; mcp_json: { mcpServers: Record<string, unknown> } };
  troubleshooting_url: string;
  without_session: string;
  inspector: { list_tools: string; claim_next: string; complete: string };
}

/** The Inspector recipe's commands for this server, with this credential text. */
function inspectorCommands(credential: string): string[] {
  const base = `npx @modelcontextprotocol/inspector --cli ${PUBLIC_URL}/mcp --transport http --header "Authorization: Bearer ${credential}"`;
  return [
    `${base} --method tools/list`,
    `${base} --method tools/call --tool-name claim_next --tool-arg wait_seconds=10`,
    `${base} --method tools/call --tool-name complete --tool-arg id=<TODO_ID> lease_token=<LEASE_TOKEN>`,
  ];
}

/** What a hint list says, pulled out of its text. */
function fromHints(hints: string[]) {
  const all = hints.join('\n');
  return {
    server_name: /--dangerously-load-development-channels server:(\S+)/.exec(all)?.[1],
    channel_flag: /(--dangerously-load-development-channels server:\S+)/.exec(all)?.[1],
    allowed_tools: /--allowedTools (mcp__[^\s,]+)/.exec(all)?.[1],
    bridge: /(switchboard bridge .*)$/m.exec(all)?.[1],
    troubleshooting_url: /^Troubleshooting: (\S+)/m.exec(hints.at(-1) ?? '')?.[1],
  };
}

const essentials = (g: Guidance) => ({
  server_name: g.server_name,
  channel_flag: g.claude_code.channel_flag,
  allowed_tools: g.claude_code.allowed_tools,
  bridge: g.bridge.command,
  troubleshooting_url: g.troubleshooting_url,
});

test('vend (API, CLI), endpoint connect and the self-test hints name the same server, flags and page', async () => {
  const vended = await api(s.url, me.token, 'POST', '/api/v1/endpoints', { name: 'reviewer' });
  assert.equal(vended.status, 201);
  const slug: string = vended.body.endpoint.slug;
  const guidance = vended.body.guidance as Guidance;
  const expected = {
    server_name: slug,
    channel_flag: `--dangerously-load-development-channels server:${slug}`,
    allowed_tools: `mcp__${slug}`,
    bridge: `switchboard bridge --url ${PUBLIC_URL} --token-file <CREDENTIAL_FILE>`,
    troubleshooting_url: `${PUBLIC_URL}/docs/doorbell`,
  };
  assert.deepEqual(essentials(guidance), expected);
  assert.deepEqual(Object.keys(vended.body.mcp_json.mcpServers), [slug], '.mcp.json registers that name');
  assert.ok((vended.body.claude_mcp_add as string).includes(` --transport http ${slug} `));
  assert.deepEqual(Object.keys(guidance.bridge.mcp_json.mcpServers), [slug], 'the bridge registers that name too');
  assert.equal(guidance.without_session, WITHOUT_SESSION);
  assert.match(guidance.without_session, /lease_token/);
  assert.deepEqual(Object.values(guidance.inspector), inspectorCommands('<CREDENTIAL>'), 'no credential in guidance');

  // The CLI: connect (--json and text), and vend's text for a second endpoint.
  const connect = JSON.parse(await cli(['endpoint', 'connect', slug, '--json'])) as { guidance: Guidance };
  assert.deepEqual(connect.guidance, guidance, 'connect --json carries the vend answer’s guidance');
  const connectText = await cli(['endpoint', 'connect', slug]);
  for (const text of [expected.channel_flag, `--allowedTools ${expected.allowed_tools}`, expected.bridge]) {
    assert.ok(connectText.includes(text), `connect prints ${text}`);
  }
  assert.ok(connectText.includes(`Troubleshooting: ${expected.troubleshooting_url}\n`), connectText);
  for (const text of [WITHOUT_SESSION, ...inspectorCommands('<CREDENTIAL>')]) {
    assert.ok(connectText.includes(text), `connect prints ${text}`);
  }
  const cliVend = JSON.parse(await cli(['endpoint', 'vend', 'second', '--json'])) as {
    endpoint: { slug: string };
    guidance: Guidance;
  };
  assert.equal(cliVend.guidance.server_name, cliVend.endpoint.slug);
  const vendText = await cli(['endpoint', 'vend', 'third']);
  const third = /^slug\s+(\S+)/m.exec(vendText)?.[1] ?? '';
  assert.ok(vendText.includes(`server:${third} --allowedTools mcp__${third}`), vendText);
  assert.ok(vendText.includes(`Troubleshooting: ${expected.troubleshooting_url}`), vendText);
  const credential = /^ {2}(sbk_\S+)$/m.exec(vendText)?.[1] ?? '';
  assert.match(credential, /^sbk_/, vendText);
  for (const text of [WITHOUT_SESSION, ...inspectorCommands(credential)]) {
    assert.ok(vendText.includes(text), `vend prints ${text}`);
  }

  // The self-test, from the operator route (as switchboard doctor runs it), for a Claude
  // Code client that does not listen: the hints say exactly what vend said.
  const a = await agent(pool, s.url, vended.body.credential as string, { name: 'claude-code' });
  const path = `/api/v1/endpoints/${slug}/doorbell-tests`;
  const start = await api(s.url, me.token, 'POST', path, { wait_seconds: 10 });
  assert.equal(start.status, 201);
  const testId: string = start.body.test_id;
  await until(async () => (await ringOfTest(pool, testId)) !== undefined, 'the ring to be delivered');
  await expireTest(pool, testId);
  const report: Body = await verdictOf(
    async (): Promise<unknown> => (await api(s.url, me.token, 'GET', `${path}/${testId}`)).body,
  );
  assert.equal(report.verdict, 'unheard');
  const hints = report.hints as string[];
  assert.deepEqual(fromHints(hints), expected, hints.join('\n'));
  assert.ok(!hints.join(' ').includes('docs/doorbell.md'), 'the troubleshooting line is no repository path');

  // Over MCP the same server, flags, bridge and page.
  const viaMcp = fromHints((await tool(a, 'get_doorbell_test', { test_id: testId })).hints as string[]);
  assert.deepEqual(viaMcp, expected);
});
