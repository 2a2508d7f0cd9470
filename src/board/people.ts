// The people page (docs/design/people.md): admins list every human and invite, disable or
// enable, re-role, issue a reset link to, and list and revoke the tokens of any of them;
// members see only themselves. Everyone changes their own password here. Every action is
// a POST form with the session's CSRF token through the identity use cases (which audit),
// answered with a 303 back, or the page again with the message next to its field or row;
// a one-time link (invite, reset) is shown once on the answer itself. A member's POST to
// an admin action answers 403; an unknown human 404.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../domain/errors.js';
import type { Auth } from '../http/auth.js';
import { openBoardSession, type BoardSession } from '../identity/board-sessions.js';
import { createHuman, getHuman, listHumansWithTokens } from '../identity/humans.js';
import {
  changeOwnPassword,
  issueReset,
  listHumanAuditPage,
  listHumanTokens,
  revokeHumanToken,
  updateHuman,
} from '../identity/lifecycle.js';
import { chromeOf, field, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { errorLine, html, page } from './html.js';
import { historyBody, linkReveal, peopleBody, resetEnded, tokensBody, type PeopleErrors } from './people-html.js';
import type { BoardDeps } from './guard.js';
import { setSessionCookie } from './session.js';

type IdParams = { Params: { id: string } };
type TokenParams = { Params: { id: string; tokenId: string } };

/** The status a refused use case answers with on the board. */
const STATUS: Record<string, number> = {
  invalid_argument: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  failed_precondition: 409,
};

const NOTICES: Record<string, string> = { changed: 'Password changed.' };

export function peoplePages(app: FastifyInstance, deps: BoardDeps, auth: Auth): void {
  const chrome = (session: BoardSession) => chromeOf(session, 'people');
  const render = async (reply: FastifyReply, session: BoardSession, status: number, errors: PeopleErrors = {}) => {
    const people = await listHumansWithTokens(deps.identity);
    return sendHtml(
      reply,
      status,
      page('People', peopleBody(people, session.principal.human, session.csrf, errors), chrome(session)),
    );
  };

  /** The admin's session of a form, or null after answering (sign-in, expired form, 403). */
  async function adminForm(request: FastifyRequest<{ Body: Form }>, reply: FastifyReply) {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return null;
    if (session.principal.human.role === 'admin') return session;
    void sendHtml(reply, 403, page('Not allowed', errorLine('Only an admin can manage people.'), chrome(session)));
    return null;
  }

  /** Runs a row action; a refusal re-renders the page with the message in that human's row. */
  async function rowAction<T>(
    request: FastifyRequest<IdParams & { Body: Form }>,
    reply: FastifyReply,
    act: (session: BoardSession) => Promise<T>,
    done: (session: BoardSession, result: T) => unknown = () => reply.redirect('/people', 303),
  ) {
    const session = await adminForm(request, reply);
    if (!session) return reply;
    let result: T;
    try {
      result = await act(session);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'human');
      if (!isAppError(err) || !(err.code in STATUS)) throw err;
      return render(reply, session, STATUS[err.code] ?? 400, { row: { id: request.params.id, message: err.message } });
    }
    return done(session, result);
  }

  app.get<{ Querystring: { password?: string } }>('/people', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const notice = NOTICES[request.query.password ?? ''];
    return render(reply, session, 200, notice ? { notice } : {});
  });

  app.post<{ Body: Form }>('/people', async (request, reply) => {
    const session = await adminForm(request, reply);
    if (!session) return reply;
    const values = Object.fromEntries(['email', 'display_name', 'role'].map((k) => [k, field(request.body, k)]));
    const input = {
      email: values.email,
      role: values.role || 'member',
      ...(values.display_name ? { display_name: values.display_name } : {}),
    };
    try {
      const { human, invite_url } = await createHuman(deps.identity, input, session.principal);
      const body = linkReveal('Invite link', human.email, invite_url ?? '', null);
      return sendHtml(reply, 201, page('Invite link', body, chrome(session)));
    } catch (err) {
      if (!isAppError(err, 'invalid_argument') && !isAppError(err, 'conflict')) throw err;
      return render(reply, session, STATUS[err.code] ?? 400, { invite: { message: err.message, values } });
    }
  });

  app.post<IdParams & { Body: Form }>('/people/:id/state', (request, reply) =>
    rowAction(request, reply, (s) =>
      updateHuman(deps.identity, s.principal, request.params.id, { state: field(request.body, 'state') }),
    ),
  );

  app.post<IdParams & { Body: Form }>('/people/:id/role', (request, reply) =>
    rowAction(request, reply, (s) =>
      updateHuman(deps.identity, s.principal, request.params.id, { role: field(request.body, 'role') }),
    ),
  );

  app.post<IdParams & { Body: Form }>('/people/:id/reset', (request, reply) =>
    rowAction(
      request,
      reply,
      (s) =>
        issueReset(deps.identity, s.principal, request.params.id, {
          ...(field(request.body, 'revoke_oauth_grants') === 'on' && { revoke_oauth_grants: true }),
          ...(field(request.body, 'rotate_endpoint_credentials') === 'on' && { rotate_endpoint_credentials: true }),
        }),
      (session, answer) => {
        const { human, reset_url, expires_at } = answer;
        const body = linkReveal('Password-reset link', human.email, reset_url, expires_at, resetEnded(answer));
        return sendHtml(reply, 201, page('Reset link', body, chrome(session)));
      },
    ),
  );

  app.get<IdParams>('/people/:id/tokens', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    if (session.principal.human.role !== 'admin') {
      return sendHtml(reply, 403, page('Not allowed', errorLine('Only an admin can manage people.'), chrome(session)));
    }
    try {
      const human = await getHuman(deps.identity, request.params.id);
      const tokens = await listHumanTokens(deps.identity, human.id);
      const history = await listHumanAuditPage(deps.identity, human.id, { limit: '20' });
      const body = html`${tokensBody(human, tokens, session.csrf, deps.now())}${historyBody(human, history.entries, history.next_before !== null)}`;
      return sendHtml(reply, 200, page(`Tokens of ${human.email}`, body, chrome(session)));
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'human');
      throw err;
    }
  });

  app.post<TokenParams & { Body: Form }>('/people/:id/tokens/:tokenId/revoke', async (request, reply) => {
    const session = await adminForm(request, reply);
    if (!session) return reply;
    try {
      await revokeHumanToken(deps.identity, session.principal, request.params.id, request.params.tokenId);
    } catch (err) {
      if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'token');
      throw err;
    }
    return reply.redirect(`/people/${encodeURIComponent(request.params.id)}/tokens`, 303);
  });

  app.post<{ Body: Form }>('/people/me/password', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    // Guessing the current password through the board costs what a sign-in costs.
    auth.limitSignIn(request, reply);
    const keep = field(request.body, 'sign_out_others') !== '1';
    const input = { current: field(request.body, 'current'), new: field(request.body, 'new'), keep_sessions: keep };
    try {
      await changeOwnPassword(deps.identity, session.principal, input);
    } catch (err) {
      if (!isAppError(err, 'invalid_argument')) throw err;
      return render(reply, session, 400, { password: { message: err.message } });
    }
    // Every sign-in ended, this one too: the human who just proved their password stays signed in here.
    if (!keep)
      setSessionCookie(
        deps.identity,
        request,
        reply,
        (await openBoardSession(deps.identity, session.principal.human.id)).cookie,
      );
    return reply.redirect('/people?password=changed', 303);
  });
}
