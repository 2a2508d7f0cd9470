// The settings page: what this install is configured with, readable by every signed-in
// human. Today that is retention (from SWITCHBOARD_RETENTION, so read-only here); the
// message queue capacity control (seed 002: admins write, members read, locked when the
// environment sets it) lands in its data-slot.

import type { FastifyInstance } from 'fastify';
import { chromeOf, html, signedIn } from './guard.js';
import { page } from './html.js';
import type { BoardDeps } from './queues.js';

export interface SettingsView {
  /** How long finished todos are kept, in ms; absent when the caller did not say. */
  retentionMs?: number;
}

function days(ms: number): string {
  const d = ms / 86_400_000;
  return Number.isInteger(d) ? `${d} days` : `${Math.round(ms / 3_600_000)} hours`;
}

export function settingsPage(app: FastifyInstance, deps: BoardDeps & { settings?: SettingsView }): void {
  app.get('/settings', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const retention = deps.settings?.retentionMs;
    const body = `<section aria-labelledby="retention"><h2 id="retention">Retention</h2>
${
  retention === undefined
    ? '<p class="note">Not reported by this server.</p>'
    : `<p>Finished todos (done, canceled, dead-lettered) are deleted after <strong data-setting="retention">${days(retention)}</strong>; live todos never are.</p>`
}
<p class="note">Set by <code>SWITCHBOARD_RETENTION</code> in the server's environment: read-only here.</p></section>
<section class="slot" data-slot="message-queue-capacity"></section>`;
    return html(reply, 200, page('Settings', body, chromeOf(session, 'settings')));
  });
}
