// The settings page: what this install is configured with, readable by every signed-in
// human. Retention (from SWITCHBOARD_RETENTION, so read-only here) and the message queue
// capacity (admins write, members read, locked when the environment sets it:
// docs/design/message-queue.md).

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BoardSession } from '../identity/board-sessions.js';
import type { MessageDeps } from '../messages/context.js';
import { capacityPages, capacitySection } from './capacity.js';
import { chromeOf, sendHtml, signedIn } from './guard.js';
import { html, page } from './html.js';
import type { BoardDeps } from './guard.js';

export interface SettingsView {
  /** How long finished todos are kept, in ms. */
  retentionMs: number;
}

function days(ms: number): string {
  const d = ms / 86_400_000;
  return Number.isInteger(d) ? `${d} days` : `${Math.round(ms / 3_600_000)} hours`;
}

type Deps = BoardDeps & { settings: SettingsView; messages: MessageDeps };

async function settingsBody(deps: Deps, session: BoardSession, capacity?: { error: string; typed: string }) {
  const retention = deps.settings.retentionMs;
  const queue = capacitySection(await deps.messages.capacity.snapshot(), session, capacity?.error, capacity?.typed);
  return html`<section aria-labelledby="retention"><h2 id="retention">Retention</h2>
<p>Finished todos (done, canceled, dead-lettered) are deleted after <strong data-setting="retention">${days(retention)}</strong>; live todos never are.</p>
<p class="note">Set by <code>SWITCHBOARD_RETENTION</code> in the server's environment: read-only here.</p></section>
${queue}`;
}

export function settingsPage(app: FastifyInstance, deps: Deps): void {
  const render = async (
    reply: FastifyReply,
    session: BoardSession,
    status: number,
    capacity?: { error: string; typed: string },
  ) =>
    sendHtml(
      reply,
      status,
      page('Settings', await settingsBody(deps, session, capacity), chromeOf(session, 'settings')),
    );
  app.get('/settings', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    return session ? render(reply, session, 200) : reply;
  });
  capacityPages(app, deps, render);
}
