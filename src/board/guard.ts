// What every signed-in board route does first: find the board session from its cookie
// (or send the browser to /login), and for a state-changing form compare the form's
// CSRF token with the session's in constant time. Also the board's answer for errors a
// use case raises: the page again with the message, or 404 for what is not theirs.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { boardCookies } from '../http/auth.js';
import { boardSession, type BoardSession } from '../identity/board-sessions.js';
import type { IdentityDeps, Principal } from '../identity/principal.js';
import type { OperatorDeps } from '../endpoints/todos.js';
import { errorLine, htmlText, page, type Chrome, type SafeHtml } from './html.js';

/** What the board needs to know who is asking. */
export interface BoardIdentity extends IdentityDeps {
  /** Set when SWITCHBOARD_AUTH=off: every request is this admin, without signing in. */
  syntheticAdmin?: Principal | null;
}

/** What every board page gets: who is asking, the operator use cases, and the clock. */
export interface BoardDeps {
  identity: BoardIdentity;
  operator: OperatorDeps;
  now: () => Date;
}

export type Form = Record<string, string | string[] | undefined>;

export function sameToken(a: unknown, b: string | undefined): boolean {
  if (typeof a !== 'string' || !a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The caller's board session without answering anything: from the session cookie, or
 * with auth off the synthetic admin, whose CSRF token lives in a cookie of its own (set
 * when a reply is at hand), so a cross-site form still cannot act on a loopback server.
 */
export async function boardCaller(
  deps: BoardIdentity,
  request: FastifyRequest,
  reply?: FastifyReply,
): Promise<BoardSession | null> {
  const names = boardCookies(deps.publicUrl);
  if (deps.syntheticAdmin) {
    // With auth off there is no sign-in: the CSRF token is a double-submit cookie instead.
    let csrf = request.cookies[names.localCsrf];
    if (!csrf && reply) {
      csrf = randomBytes(18).toString('base64url');
      const options = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: names.secure };
      void reply.setCookie(names.localCsrf, csrf, options);
    }
    return { principal: deps.syntheticAdmin, csrf: csrf ?? '', expires_at: null };
  }
  return boardSession(deps, request.cookies[names.session]);
}

/**
 * The board session, or null after sending the browser to sign in and come back to this
 * very URL (the OAuth consent page and the CLI's sign-in page, which are reached signed out).
 */
export async function signedInOrBack(
  deps: BoardIdentity,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<BoardSession | null> {
  const session = await boardCaller(deps, request, reply);
  if (!session) void reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
  return session;
}

/** The board session, or null after sending a redirect to /login. */
export async function signedIn(
  deps: BoardIdentity,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<BoardSession | null> {
  const session = await boardCaller(deps, request, reply);
  if (!session) void reply.redirect('/login', 303);
  return session;
}

export function chromeOf(session: BoardSession, current?: Chrome['current']): Chrome {
  return { email: session.principal.human.email, csrf: session.csrf, ...(current ? { current } : {}) };
}

/** Sends a page or fragment: the one place board HTML becomes a plain string. */
export function sendHtml(reply: FastifyReply, status: number, body: SafeHtml) {
  return reply.status(status).type('text/html; charset=utf-8').send(htmlText(body));
}

/**
 * The session of a state-changing form with a valid CSRF token; otherwise null after
 * answering (redirect to /login, or 403 with a page that says the form expired).
 */
export async function signedInForm(
  deps: BoardIdentity,
  request: FastifyRequest<{ Body: Form }>,
  reply: FastifyReply,
): Promise<BoardSession | null> {
  const session = await signedIn(deps, request, reply);
  if (!session) return null;
  if (!sameToken(request.body?.csrf, session.csrf)) {
    void sendHtml(
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
  return sendHtml(reply, 404, page('Not found', errorLine(`No such ${what}.`), chromeOf(session)));
}
