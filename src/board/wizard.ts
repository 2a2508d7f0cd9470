// The vend wizard, as full pages that work without JavaScript: name → queues → verb
// families (admission and hooks unchecked, with their notes) → lifetime → confirm →
// the one-time reveal of the credential, the .mcp.json block and the `claude mcp add`
// line, and how to hear the doorbell under that server name. Answers so far travel as hidden fields; each step is checked before the next is
// shown, and nothing is written until the confirm step's form is posted.

import type { FastifyInstance } from 'fastify';
import { vendEndpoint } from '../endpoints/manage.js';
import { isAppError } from '../domain/errors.js';
import {
  CREDENTIAL_FILE_PLACEHOLDER,
  oauthClientConfig,
  withCredential,
  type ConnectGuidance,
} from '../domain/guidance.js';
import { QUEUE_NAME } from '../domain/todo.js';
import { FAMILY_NOTES, VERB_FAMILIES, type VerbFamily } from '../domain/verbs.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { chromeOf, field, fields, sendHtml, signedIn, signedInForm, type Form } from './guard.js';
import { withError } from './field-errors.js';
import { csrfField, href, html, joinHtml, page, type SafeHtml } from './html.js';
import { copyBlock } from './copy.js';
import type { BoardDeps } from './guard.js';

const STEPS = ['name', 'queues', 'verbs', 'lifetime', 'confirm'] as const;
type Step = (typeof STEPS)[number];
const FAMILIES = Object.keys(VERB_FAMILIES) as VerbFamily[];
const DEFAULT_FAMILIES: VerbFamily[] = ['drain', 'create', 'messages'];
/** Lifetimes offered, in days; 0 is "never expires". */
const LIFETIMES: Record<string, { label: string; days: number }> = {
  never: { label: 'Never expires', days: 0 },
  '1d': { label: '1 day', days: 1 },
  '7d': { label: '7 days', days: 7 },
  '30d': { label: '30 days', days: 30 },
  '90d': { label: '90 days', days: 90 },
};

interface Answers {
  name: string;
  queues: string;
  /** False until the verbs step has been answered: then the defaults stand. */
  verbsChosen: boolean;
  verbs: string[];
  lifetime: string;
}

function answersOf(form: Form | undefined): Answers {
  const verbsChosen = field(form, 'verbs_chosen') === '1' || field(form, 'step') === 'verbs';
  return {
    name: field(form, 'name'),
    queues: field(form, 'queues') || 'inbox',
    verbsChosen,
    verbs: verbsChosen ? fields(form, 'verbs').filter((v) => FAMILIES.includes(v as VerbFamily)) : DEFAULT_FAMILIES,
    lifetime: Object.hasOwn(LIFETIMES, field(form, 'lifetime')) ? field(form, 'lifetime') : 'never',
  };
}

const queueList = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/** The first problem with the answers up to this step, or null. */
function problem(step: Step, a: Answers): string | null {
  const upTo = STEPS.indexOf(step);
  if (upTo >= 0 && !a.name.trim()) return 'name: must not be empty';
  if (upTo >= 0 && a.name.trim().length > 80) return 'name: must be at most 80 characters';
  if (upTo >= 1) {
    const queues = queueList(a.queues);
    if (queues.length === 0) return 'queues: name at least one queue';
    const bad = queues.find((q) => !QUEUE_NAME.test(q));
    if (bad) return `queues: "${bad}" must match [a-z0-9][a-z0-9_-]{0,62}`;
  }
  return null;
}

function hidden(a: Answers, except: Step): SafeHtml {
  const h = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;
  return joinHtml([
    except === 'name' ? '' : h('name', a.name),
    except === 'queues' ? '' : h('queues', a.queues),
    except === 'verbs' || !a.verbsChosen ? '' : html`${h('verbs_chosen', '1')}${a.verbs.map((v) => h('verbs', v))}`,
    except === 'lifetime' ? '' : h('lifetime', a.lifetime),
  ]);
}

function stepFields(step: Step, a: Answers): SafeHtml {
  if (step === 'name')
    return html`<label for="wiz-name">Name</label><input id="wiz-name" name="name" required maxlength="80" value="${a.name}" autofocus>`;
  if (step === 'queues')
    return html`<label for="wiz-queues">Queues (separated by commas or spaces)</label><input id="wiz-queues" name="queues" value="${a.queues}" autofocus>`;
  if (step === 'verbs')
    return html`<fieldset><legend>Verb families</legend>${FAMILIES.map(
      (
        f,
      ) => html`<label class="check"><input type="checkbox" name="verbs" value="${f}" id="wiz-verbs-${f}"${a.verbs.includes(f) ? ' checked' : ''}>
<span><strong>${f}</strong> <span class="note">${joinHtml(VERB_FAMILIES[f], ', ')}${FAMILY_NOTES[f] ? ` — ${FAMILY_NOTES[f]}` : ''}</span></span></label>`,
    )}</fieldset>`;
  if (step === 'lifetime')
    return html`<fieldset><legend>Lifetime</legend>${Object.entries(LIFETIMES).map(
      ([key, l]) =>
        html`<label class="check"><input type="radio" name="lifetime" value="${key}" id="wiz-life-${key}"${a.lifetime === key ? ' checked' : ''}> ${l.label}</label>`,
    )}</fieldset>`;
  return html`<dl><dt>Name</dt><dd>${a.name}</dd><dt>Queues</dt><dd>${joinHtml(queueList(a.queues).map(escape), ', ')}</dd>
<dt>Verb families</dt><dd>${a.verbs.join(', ') || 'none'}</dd><dt>Lifetime</dt><dd>${LIFETIMES[a.lifetime]?.label ?? ''}</dd></dl>`;
}

function stepPage(session: BoardSession, step: Step, a: Answers, error?: string | null): SafeHtml {
  const n = STEPS.indexOf(step);
  const last = step === 'confirm';
  const form = html`<form method="post" action="${last ? '/endpoints' : '/endpoints/new'}">${csrfField(session.csrf)}
<input type="hidden" name="step" value="${step}">${hidden(a, step)}${stepFields(step, a)}
<div class="actions">${n > 0 ? html`<button type="submit" name="go" value="back" formnovalidate>Back</button>` : ''}
<button type="submit" class="primary" name="go" value="next">${last ? 'Vend endpoint' : 'Next'}</button></div></form>`;
  const body = html`<p class="note">Step ${n + 1} of ${STEPS.length}: ${step}</p>${withError(form, error ?? undefined)}`;
  return page('Vend an endpoint', body, chromeOf(session, 'endpoints'));
}

/** How to hear the doorbell, under the name the blocks above registered (src/domain/guidance.ts). */
function guidanceSection(g: ConnectGuidance): SafeHtml {
  const name = html`<code>${g.server_name}</code>`;
  return html`<section id="guidance" aria-labelledby="guidance-heading" data-server-name="${g.server_name}"><h2 id="guidance-heading">Hearing the doorbell</h2>
<p>The blocks above register this endpoint as the MCP server ${name}. Claude Code hears its doorbell only when started
with the channel flag for that server, <code id="channel-flag">${g.claude_code.channel_flag}</code>, and a woken
session needs the server's tools allowed (<code>${g.claude_code.allowed_tools}</code>), or it stops at a permission prompt:</p>
${copyBlock('claude-code-command', g.claude_code.command, 'the Claude Code command')}
<p>For a client that only speaks stdio or does not take channel notifications, run the stdio bridge as the MCP
server ${name} (${CREDENTIAL_FILE_PLACEHOLDER}: a file with the credential on its first line):</p>
${copyBlock('bridge-command', g.bridge.command, 'the bridge command')}
<p>Without channels at all, wait for work with <code>claim_next {wait_seconds}</code>.
<a id="troubleshooting" href="${href(g.troubleshooting_url)}">Troubleshooting the doorbell</a></p></section>`;
}

/** How a client without a lasting session finishes its work, and the Inspector recipe with this credential. */
function sessionlessSection(g: ConnectGuidance, credential: string): SafeHtml {
  const recipe = [g.inspector.list_tools, g.inspector.claim_next, g.inspector.complete]
    .map((command) => withCredential(command, credential))
    .join('\n');
  return html`<section id="without-session" aria-labelledby="without-session-heading"><h2 id="without-session-heading">Without a lasting session</h2>
<p id="lease-token-sentence">${g.without_session}</p>
<p>Try the endpoint from a shell with the MCP Inspector CLI; each command is a session of its own, so the last one
finishes the claim with the lease token that claim_next answered:</p>
${copyBlock('inspector-recipe', recipe, 'the MCP Inspector commands')}</section>`;
}

/** What vend and rotate both answer: a credential shown once and how to connect with it. */
type Issued = Pick<
  Awaited<ReturnType<typeof vendEndpoint>>,
  'endpoint' | 'credential' | 'mcp_json' | 'claude_mcp_add' | 'guidance'
>;

/**
 * The one-time reveal of a credential, after vend or a rotation; `status` says which
 * (its slug is escaped here, the rest is the caller's own text).
 */
export function reveal(
  session: BoardSession,
  vended: Issued,
  publicUrl: string,
  status = html`<strong>${vended.endpoint.slug}</strong> is ready.`,
  title = 'Endpoint vended',
): SafeHtml {
  const oauthJson = JSON.stringify(oauthClientConfig(publicUrl, vended.endpoint.slug), null, 2);
  const body = html`<p role="status">${status} The credential is shown <strong>only this once</strong>: copy it now.</p>
<h2>Credential</h2>${copyBlock('credential', vended.credential, 'the credential')}
<h2><code>.mcp.json</code></h2>${copyBlock('mcp-json', JSON.stringify(vended.mcp_json, null, 2), 'the .mcp.json block')}
<h2><code>.mcp.json</code> for a client that signs in with OAuth</h2>
<p>A client that follows the MCP authorization spec needs only the URL: it opens a consent page here, where you pick this endpoint. No credential is stored in the file.</p>
${copyBlock('mcp-json-oauth', oauthJson, 'the OAuth .mcp.json block')}
<h2>Claude Code</h2>${copyBlock('claude-mcp-add', vended.claude_mcp_add, 'the claude mcp add line')}
${guidanceSection(vended.guidance)}
${sessionlessSection(vended.guidance, vended.credential)}
<p><a href="/endpoints/${vended.endpoint.slug}">Go to the endpoint</a> · <a href="/">Queues</a></p>`;
  return page(title, body, chromeOf(session, 'endpoints'));
}

export function wizardPages(app: FastifyInstance, deps: BoardDeps): void {
  app.get('/endpoints/new', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    return session ? sendHtml(reply, 200, stepPage(session, 'name', answersOf(undefined))) : reply;
  });

  app.post<{ Body: Form }>('/endpoints/new', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const form = request.body;
    const from = STEPS.includes(field(form, 'step') as Step) ? (field(form, 'step') as Step) : 'name';
    const answers = answersOf(form);
    const back = field(form, 'go') === 'back';
    const at = STEPS.indexOf(from);
    if (back) return sendHtml(reply, 200, stepPage(session, STEPS[Math.max(0, at - 1)] ?? 'name', answers));
    const error = problem(from, answers);
    if (error) return sendHtml(reply, 400, stepPage(session, from, answers, error));
    return sendHtml(reply, 200, stepPage(session, STEPS[Math.min(at + 1, STEPS.length - 1)] ?? 'confirm', answers));
  });

  app.post<{ Body: Form }>('/endpoints', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const answers = answersOf(request.body);
    if (field(request.body, 'go') === 'back') return sendHtml(reply, 200, stepPage(session, 'lifetime', answers));
    const error = problem('confirm', answers);
    if (error) return sendHtml(reply, 400, stepPage(session, 'confirm', answers, error));
    const now = deps.now();
    const days = LIFETIMES[answers.lifetime]?.days ?? 0;
    const input = {
      name: answers.name.trim(),
      queues: queueList(answers.queues),
      verbs: answers.verbs,
      ...(days ? { expires_at: new Date(now.getTime() + days * 86_400_000).toISOString() } : {}),
    };
    try {
      const vended = await vendEndpoint(deps.operator, session.principal.human.id, input, now);
      return sendHtml(reply, 201, reveal(session, vended, deps.operator.publicUrl));
    } catch (err) {
      if (!isAppError(err, 'invalid_argument') && !isAppError(err, 'conflict')) throw err;
      return sendHtml(reply, 400, stepPage(session, 'confirm', answers, err.message));
    }
  });
}
