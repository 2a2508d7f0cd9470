// What every signed-in board route does first: find the board session from its cookie
// (or send the browser to /login), and for a state-changing form compare the form's
// CSRF token with the session's in constant time. Also the board's answer for errors a
// use case raises: the page again with the message, or 404 for what is not theirs.

import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { boardSession, type BoardSession } from '../identity/board-sessions.js';
import type { IdentityDeps } from '../identity/principal.js';
import { errorLine, page, type Chrome } from './html.js';

export const SESSION_COOKIE = 'sb_session';

export type Form = Record<string, string | string[] | undefined>;

export function sameToken(a: unknown, b: string | undefined): boolean {
  if (typeof a !== 'string' || !a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The board session, or null after sending a redirect to /login. */
export async function signedIn(
  deps: IdentityDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<BoardSession | null> {
  const session = await boardSession(deps, request.cookies[SESSION_COOKIE]);
  if (!session) void reply.redirect('/login', 303);
  return session;
}

export function chromeOf(session: BoardSession, current?: Chrome['current']): Chrome {
  return { email: session.principal.human.email, csrf: session.csrf, ...(current ? { current } : {}) };
}

export function html(reply: FastifyReply, status: number, body: string) {
  return reply.status(status).type('text/html; charset=utf-8').send(body);
}

/**
 * The session of a state-changing form with a valid CSRF token; otherwise null after
 * answering (redirect to /login, or 403 with a page that says the form expired).
 */
export async function signedInForm(
  deps: IdentityDeps,
  request: FastifyRequest<{ Body: Form }>,
  reply: FastifyReply,
): Promise<BoardSession | null> {
  const session = await signedIn(deps, request, reply);
  if (!session) return null;
  if (!sameToken(request.body?.csrf, session.csrf)) {
    void html(
      reply,
      403,
      page(
        'Form expired',
        errorLine('The form expired or did not come from this board; reload and try again.'),
        chromeOf(session),
      ),
    );
    return null;
  }
  return session;
}

/** A form field as one string ('' when absent); repeated fields take the first. */
export function field(form: Form | undefined, name: string): string {
  const value = form?.[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** A form field that may repeat (checkboxes), as a list. */
export function fields(form: Form | undefined, name: string): string[] {
  const value = form?.[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Only same-site paths are followed after an action; anything else goes home. */
export function backTo(form: Form | undefined, fallback: string): string {
  const back = field(form, 'back');
  return /^\/(?![/\\])[\w\-./?=&%]*$/.test(back) ? back : fallback;
}

export function notFoundPage(reply: FastifyReply, session: BoardSession, what: string) {
  return html(reply, 404, page('Not found', errorLine(`No such ${what}.`), chromeOf(session)));
}
