// GET /docs/doorbell: the doorbell's troubleshooting page, served by Switchboard itself so
// the self-test's hints, vend and `switchboard endpoint connect` can link to it at
// `{publicUrl}/docs/doorbell` wherever the server runs. Public (an agent's operator may
// not be signed in where the hint is read), static but for the server's URL, and the
// same content as docs/doorbell.md: keep the two consistent.

import type { FastifyInstance } from 'fastify';
import { CREDENTIAL_FILE_PLACEHOLDER, CREDENTIAL_PLACEHOLDER, connectGuidance } from '../domain/guidance.js';
import { HINTS, VERDICTS } from '../doorbell/hints.js';
import { sendHtml } from './guard.js';
import { html, joinHtml, page, type SafeHtml } from './html.js';

/** The server name where the page shows it: it is each endpoint's own (its slug). */
export const SERVER_NAME_PLACEHOLDER = '<server-name>';

const VERDICT_MEANINGS: Array<[string, string]> = [
  ['pending', 'the test is running: no claim yet, and report_after has not passed'],
  ['pass', 'delivered and heard: the synthetic todo was claimed (claimed_within_seconds)'],
  ['no_session', 'nothing is connected to the endpoint (or to the session that asked)'],
  ['no_channel', 'a session is connected but its initialize did not declare claude/channel: it is never rung'],
  ['no_stream', 'a session is connected but holds no notification stream (GET /mcp)'],
  ['write_failed', 'the stream closed while the doorbell was being written'],
  ['unheard', 'delivered to the stream, but nothing claimed it within wait_seconds'],
];

const code = (text: string) => html`<code>${text}</code>`;
const pre = (text: string) => html`<pre>${text}</pre>`;

export function doorbellDocsBody(publicUrl: string): SafeHtml {
  const g = connectGuidance(publicUrl, SERVER_NAME_PLACEHOLDER);
  const rows = VERDICTS.flatMap((verdict) =>
    (['claude-code', 'crush', 'other'] as const).map((family) => {
      const hints = HINTS[verdict][family](g);
      const cell = hints.length === 0 ? 'none' : html`<ul>${hints.map((h) => html`<li>${h}</li>`)}</ul>`;
      return html`<tr><td>${verdict}</td><td>${family}</td><td>${cell}</td></tr>`;
    }),
  );
  return html`<p>A doorbell is a ${code('notifications/claude/channel')} event Switchboard writes to one session's
notification stream when work is ready. <strong>Delivered</strong> means the server wrote it to the stream, nothing
more: a client that did not load Switchboard as a channel drops the event silently. <strong>Heard</strong> means the
agent acted on it: a claim of the rung todo (by any session of the endpoint) is the acknowledgement, and
${code('ack_doorbell {ring_id}')} says "heard" without claiming. A ring nobody acknowledged within the ack window
(15 minutes by default) is <strong>unheard</strong>; a session whose last 3 rings went unheard is marked unheard.</p>

<h2>The server name</h2>
<p>Vend (${code('switchboard endpoint vend')}, the board's wizard, ${code('POST /api/v1/endpoints')}) and
${code('switchboard endpoint connect')} register the endpoint's MCP server under its slug, for example
${code('reviewer-4aja3u8v')}. Every flag below names that server: put your endpoint's slug where this page shows
${code(SERVER_NAME_PLACEHOLDER)}. Vend and connect print the flags with the name filled in.</p>

<h2>Claude Code</h2>
<p>Claude Code hears a doorbell only when the server is loaded as a development channel, and a woken session stops
at a permission prompt unless Switchboard's tools are allowed:</p>
${pre(g.claude_code.command)}
<ul><li>${code(g.claude_code.channel_flag)}: without it Claude Code drops the doorbell silently.</li>
<li>${code(`--allowedTools ${g.claude_code.allowed_tools}`)}: every tool of the server, so a woken session can
claim without asking.</li>
<li>${code('claude -p')} cannot be woken: use a notify hook instead.</li></ul>

<h2>The stdio bridge</h2>
<p>For a client that only speaks stdio, or that does not take channel notifications over HTTP,
${code('switchboard bridge')} is a stdio MCP server that forwards to ${code(`${publicUrl}/mcp`)}, doorbells
included. Put the endpoint's credential on the first line of a file, name it in place of
${code(CREDENTIAL_FILE_PLACEHOLDER)}, and register the bridge under the same server name:</p>
${pre(g.bridge.command)}
${pre(JSON.stringify(g.bridge.mcp_json, null, 2))}
<p>${code('--token sbk_…')} works too, but is visible to ${code('ps')}. With Claude Code the channel flag and the
allowed tools above still apply, with the same server name.</p>

<h2>Without the doorbell</h2>
<p>A client that cannot take channel notifications at all waits for work with a long poll instead:
${code('claim_next {wait_seconds}')} holds the call until a todo is ready or the wait ends.</p>

<h2 id="without-session">Without a lasting session</h2>
<p>${g.without_session} A doorbell needs a session with an open stream, so such a client waits with
${code('claim_next {wait_seconds}')}. To try an endpoint from a shell, the MCP Inspector's CLI mode runs one call
per command (put the endpoint's credential in place of ${code(CREDENTIAL_PLACEHOLDER)}, and the todo id and lease
token the claim answered in the last one):</p>
${pre([g.inspector.list_tools, g.inspector.claim_next, g.inspector.complete].join('\n'))}
<p>An error comes back as a tool result with ${code('isError')} and the text
${code('{"error": {"code", "message"}}')}: ${code('conflict')} from complete means the claim is no longer yours.</p>

<h2>The self-test and <code>switchboard doctor</code></h2>
<p>${code('test_doorbell {wait_seconds}')} (MCP, 10–300 s, default 60) or
${code('POST /api/v1/endpoints/{ref}/doorbell-tests')} starts a test; about 2 s later a doorbell rings for a
synthetic todo that needs no work: claim it by id. Read the verdict with ${code('get_doorbell_test {test_id}')}
after ${code('report_after')}, or run:</p>
${pre(`switchboard doctor ${SERVER_NAME_PLACEHOLDER} --url ${publicUrl}`)}
<p>which checks the server, your sign-in and the endpoint's sessions, runs the self-test and exits 0 only on
${code('pass')}. The board's endpoint page has "Run self-test" too.</p>
<table><thead><tr><th>Verdict</th><th>Meaning</th></tr></thead><tbody>
${joinHtml(
  VERDICT_MEANINGS.map(([v, m]) => html`<tr><td>${code(v)}</td><td>${m}</td></tr>`),
  '\n',
)}
</tbody></table>
<p>The server cannot observe whether a client registered a channel listener; only a claim proves it.</p>

<h2>Hints</h2>
<p>The hints a report carries, by verdict and client family (from the ${code('clientInfo.name')} the session sent).
A report names your endpoint's server and this page's address.</p>
<table><thead><tr><th>Verdict</th><th>Client</th><th>Hints</th></tr></thead><tbody>
${joinHtml(rows, '\n')}
</tbody></table>`;
}

/** Registers the public troubleshooting page(s) on the board's context. */
export function docsPages(app: FastifyInstance, publicUrl: string): void {
  app.get('/docs/doorbell', async (_request, reply) =>
    sendHtml(reply, 200, page('Doorbell troubleshooting', doorbellDocsBody(publicUrl))),
  );
}
