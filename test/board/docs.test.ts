// Pins GET /docs/doorbell, the troubleshooting page every doorbell hint links to: public
// (200 HTML without signing in), the board's look and CSP, the content of docs/doorbell.md
// (channel flag, allowed tools, the bridge, claim_next's wait, switchboard doctor) with
// this server's URL filled in, and no repository path anywhere.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONTENT_SECURITY_POLICY } from '../../src/board/index.js';
import { escape } from '../../src/board/html.js';
import { WITHOUT_SESSION } from '../../src/domain/guidance.js';
import { testDatabase } from '../helpers/db.js';
import { startApp } from '../mcp/harness.js';

const db = await testDatabase('board_docs');
const { url } = await startApp(db.pool, 'board-docs');

test('GET /docs/doorbell answers 200 HTML without sign-in, with the guidance and no repository path', async () => {
  const res = await fetch(`${url}/docs/doorbell`, { redirect: 'manual' });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(res.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
  const body = await res.text();
  assert.match(body, /<title>Doorbell troubleshooting · Switchboard<\/title>/);
  assert.ok(body.includes('/board/static/board.css'), 'the look of the other board pages');
  assert.doesNotMatch(body, /<script>|<style>| style="| on\w+="/, 'nothing inline for the CSP to refuse');
  for (const text of [
    '--dangerously-load-development-channels server:&lt;server-name&gt;',
    '--allowedTools mcp__&lt;server-name&gt;',
    'switchboard bridge --url http://switchboard.test --token-file &lt;CREDENTIAL_FILE&gt;',
    'claim_next {wait_seconds}',
    'switchboard doctor &lt;server-name&gt; --url http://switchboard.test',
    'notifications/claude/channel',
    'unheard',
    escape(WITHOUT_SESSION),
    'npx @modelcontextprotocol/inspector --cli http://switchboard.test/mcp --transport http --header &quot;Authorization: Bearer &lt;CREDENTIAL&gt;&quot; --method tools/list',
    '--tool-name claim_next --tool-arg wait_seconds=10',
    '--tool-name complete --tool-arg id=&lt;TODO_ID&gt; lease_token=&lt;LEASE_TOKEN&gt;',
  ]) {
    assert.ok(body.includes(text), `the page says ${text}`);
  }
  assert.doesNotMatch(body, /docs\/doorbell\.md|src\/|\.ts\b|ADR-/, 'no repository path');
  assert.doesNotMatch(body, /action="\/logout"/, 'no signed-in chrome');
});
