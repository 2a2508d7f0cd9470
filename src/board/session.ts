// Board sign-in and sign-out. The session cookie is HttpOnly, SameSite=Lax, and Secure
// when the request came over TLS or SWITCHBOARD_PUBLIC_URL is https (behind a proxy that
// terminates TLS and is not trusted for X-Forwarded-Proto, the request alone looks plain);
// with an https public URL its name carries the `__Host-` prefix (boardCookies).
// Every form that changes state carries a CSRF token (the session's own, or before
// sign-in a double-submit cookie), checked in constant time. With OIDC configured the
// page offers "Sign in with …": /login/oidc starts the flow, keeping its state, nonce and
// PKCE verifier in a short-lived HttpOnly cookie, and /login/oidc/callback finishes it and
// opens the board session exactly as the password does (docs/design/oauth.md, "Human
// sign-in through OIDC").

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Auth } from '../http/auth.js';
import { isAppError } from '../domain/errors.js';
import {
  BOARD_SESSION_TTL_SECONDS,
  boardSession,
  openBoardSession,
  signIn,
  signOut,
} from '../identity/board-sessions.js';
import type { IdentityDeps } from '../identity/principal.js';
import { boardCookies } from '../http/auth.js';
import { OIDC_FLOW_TTL_SECONDS, type OidcFlow, type OidcProvider } from '../oidc/provider.js';
import { OidcRefusal } from '../oidc/refusal.js';
import { humanForOidc } from '../oidc/signin.js';
import { sameToken } from './guard.js';
import { errorLine, html, htmlText, page } from './html.js';

type Form = { Body: Record<string, string | undefined> };

function cookieOptions(deps: IdentityDeps, request: FastifyRequest, maxAgeSeconds: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: request.protocol === 'https' || deps.publicUrl.startsWith('https:'),
    maxAge: maxAgeSeconds,
  };
}

/**
 * A CSRF token for a form that signs a browser in (`/login`, `/setup/{token}`): set as the
 * login-CSRF cookie and returned for the form's hidden field. The post must carry both,
 * which a cross-site form cannot (login CSRF: signing a victim's browser into the
 * attacker's account). An hour: a form left open longer is reloaded.
 */
export function signedOutCsrf(deps: IdentityDeps, request: FastifyRequest, reply: FastifyReply): string {
  const csrf = randomBytes(18).toString('base64url');
  void reply.setCookie(boardCookies(deps.publicUrl).loginCsrf, csrf, cookieOptions(deps, request, 3600));
  return csrf;
}

/** Sets the board session cookie for a session just opened (sign-in, setup, own password change). */
export function setSessionCookie(deps: IdentityDeps, request: FastifyRequest, reply: FastifyReply, cookie: string) {
  void reply.setCookie(
    boardCookies(deps.publicUrl).session,
    cookie,
    cookieOptions(deps, request, BOARD_SESSION_TTL_SECONDS),
  );
}

/**
 * Where to go after signing in: a same-site path (the OAuth consent page sends the browser
 * here with its own URL, docs/design/oauth.md, "Consent"), else the board's home. Only a
 * path of URL-safe characters that is not `//…` (another host) is followed.
 */
function nextPath(value: unknown): string {
  // Bounded, as it rides in the OIDC flow cookie (a browser drops a cookie over 4 KiB); an
  // OAuth consent URL is a few hundred characters.
  return typeof value === 'string' && value.length <= 2048 && /^\/(?![/\\])[\w\-./?=&%+~*]*$/.test(value) ? value : '/';
}

function loginForm(
  deps: IdentityDeps,
  reply: FastifyReply,
  request: FastifyRequest,
  error?: string,
  oidc: OidcProvider | null = null,
) {
  const csrf = signedOutCsrf(deps, request, reply);
  void reply.type('text/html; charset=utf-8');
  const query = request.query as Record<string, unknown> | undefined;
  const body = request.body as Record<string, unknown> | undefined;
  const next = nextPath(body?.next ?? query?.next);
  // A plain link, not a boosted one: htmx would fetch the provider's page cross-origin.
  const button = oidc
    ? html`<p><a class="button primary" hx-boost="false" href="/login/oidc${next === '/' ? '' : `?next=${encodeURIComponent(next)}`}">Sign in with ${oidc.providerName}</a></p>`
    : '';
  const password =
    deps.passwordSignIn === false
      ? ''
      : html`${oidc ? html`<p>Or with your e-mail and password:</p>` : ''}<form method="post" action="/login">
<input type="hidden" name="csrf" value="${csrf}">${next === '/' ? '' : html`<input type="hidden" name="next" value="${next}">`}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`;
  return htmlText(page('Sign in', html`${errorLine(error)}${button}${password}`));
}

/**
 * Sign-ins started and not yet back, newest first, at most this many: one per tab a person
 * started one in (docs/design/oauth.md, "Where the flow's state is kept: a cookie").
 */
const MAX_FLOWS = 3;

function isFlow(value: unknown): value is OidcFlow {
  const flow = value as Partial<OidcFlow> | null;
  if (typeof flow !== 'object' || flow === null) return false;
  const texts = [flow.state, flow.nonce, flow.verifier, flow.next];
  return texts.every((t) => typeof t === 'string') && typeof flow.at === 'number';
}

/** The flows a cookie holds (a list; a lone flow as an earlier version wrote it); none if unreadable. */
function readFlows(value: string | undefined): OidcFlow[] {
  if (!value) return [];
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown;
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.every(isFlow) ? list.slice(0, MAX_FLOWS) : [];
  } catch {
    return [];
  }
}

/** A browser keeps a cookie of up to 4 KiB with its name and attributes: the value stays under this. */
const MAX_FLOWS_BYTES = 3_600;

/** The cookie value of these flows, newest first, dropping the oldest until it fits. */
function writeFlows(flows: OidcFlow[]): string {
  for (let n = flows.length; n > 1; n--) {
    const value = Buffer.from(JSON.stringify(flows.slice(0, n))).toString('base64url');
    if (value.length <= MAX_FLOWS_BYTES) return value;
  }
  return Buffer.from(JSON.stringify(flows.slice(0, 1))).toString('base64url');
}

export function sessionPages(
  app: FastifyInstance,
  deps: IdentityDeps,
  auth: Auth,
  oidc: OidcProvider | null = null,
): void {
  const names = boardCookies(deps.publicUrl);
  // A `__Host-` cookie is only replaced (or cleared) by a Set-Cookie that is Secure too.
  const clearing = { path: '/', secure: names.secure };
  app.get('/login', async (request, reply) => loginForm(deps, reply, request, undefined, oidc));

  app.post<Form>('/login', async (request, reply) => {
    const fields = request.body ?? {};
    const attempt = auth.signInAttempt(request, reply, fields.email);
    if (deps.passwordSignIn === false) {
      const use = oidc ? `the “Sign in with ${oidc.providerName}” button` : 'your organisation’s sign-in';
      return reply
        .status(403)
        .send(loginForm(deps, reply, request, `Password sign-in is turned off here; use ${use}.`, oidc));
    }
    if (!sameToken(fields.csrf, request.cookies[names.loginCsrf])) {
      return reply.status(403).send(loginForm(deps, reply, request, 'The form expired; please sign in again.', oidc));
    }
    try {
      const session = await signIn(deps, fields.email ?? '', fields.password ?? '');
      attempt.succeeded();
      setSessionCookie(deps, request, reply, session.cookie);
      void reply.clearCookie(names.loginCsrf, clearing);
      return reply.redirect(nextPath(fields.next), 303);
    } catch (err) {
      await attempt.failed(err);
      if (!isAppError(err, 'unauthenticated')) throw err;
      return reply.status(401).send(loginForm(deps, reply, request, err.message, oidc));
    }
  });

  if (oidc) oidcPages(app, deps, auth, oidc);

  app.post<Form>('/logout', async (request, reply) => {
    const cookie = request.cookies[names.session];
    const session = await boardSession(deps, cookie);
    if (session && !sameToken(request.body?.csrf, session.csrf)) {
      return reply
        .status(403)
        .type('text/html; charset=utf-8')
        .send(htmlText(page('Not signed out', errorLine('The form expired; reload and try again.'))));
    }
    await signOut(deps, cookie);
    void reply.clearCookie(names.session, clearing);
    return reply.redirect('/login', 303);
  });
}

/** Shows a refused OIDC sign-in on the sign-in page, its precise reason in the log only. */
function refused(
  deps: IdentityDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  oidc: OidcProvider,
  err: OidcRefusal,
) {
  request.log.warn({ reason: err.reason, detail: err.detail }, 'OIDC sign-in refused');
  const status = err.reason === 'provider_unavailable' ? 503 : 401;
  return reply.status(status).send(loginForm(deps, reply, request, err.userMessage, oidc));
}

function oidcPages(app: FastifyInstance, deps: IdentityDeps, auth: Auth, oidc: OidcProvider): void {
  const names = boardCookies(deps.publicUrl);
  const clearing = { path: '/', secure: names.secure };

  app.get('/login/oidc', async (request, reply) => {
    const query = request.query as Record<string, unknown> | undefined;
    try {
      const now = Date.now();
      const { url, flow } = await oidc.start(nextPath(query?.next), now);
      // Kept beside the flows other tabs started and are still within their lifetime.
      const live = readFlows(request.cookies[names.oidc]).filter((f) => now - f.at <= OIDC_FLOW_TTL_SECONDS * 1000);
      const value = writeFlows([flow, ...live].slice(0, MAX_FLOWS));
      // Lax: the provider sends the browser back with a top-level GET, which carries it.
      void reply.setCookie(names.oidc, value, cookieOptions(deps, request, OIDC_FLOW_TTL_SECONDS));
      return reply.redirect(url, 303);
    } catch (err) {
      if (err instanceof OidcRefusal) return refused(deps, request, reply, oidc, err);
      throw err;
    }
  });

  app.get('/login/oidc/callback', async (request, reply) => {
    auth.limitSignIn(request, reply);
    const flows = readFlows(request.cookies[names.oidc]);
    const state = (request.query as Record<string, unknown> | undefined)?.state;
    const match = flows.find((f) => f.state === state);
    // One use: whatever happens next, this flow is over. A callback that matches none (a
    // tampered or replayed state) ends them all; the newest is then refused by name.
    const rest = match ? flows.filter((f) => f !== match) : [];
    if (rest.length > 0) {
      void reply.setCookie(names.oidc, writeFlows(rest), cookieOptions(deps, request, OIDC_FLOW_TTL_SECONDS));
    } else {
      void reply.clearCookie(names.oidc, clearing);
    }
    const flow = match ?? flows[0] ?? null;
    try {
      const who = await oidc.finish(new URL(request.url, deps.publicUrl), flow, Date.now());
      const human = await humanForOidc(deps, who, oidc.config);
      const session = await openBoardSession(deps, human.id);
      setSessionCookie(deps, request, reply, session.cookie);
      void reply.clearCookie(names.loginCsrf, clearing);
      request.log.info({ human: human.id, issuer: who.issuer }, 'OIDC sign-in');
      return reply.redirect(nextPath(flow?.next), 303);
    } catch (err) {
      if (err instanceof OidcRefusal) return refused(deps, request, reply, oidc, err);
      throw err;
    }
  });
}
