// Authentication and authorisation for /api/v1: resolves the caller (an `sbt_` API
// token, or the synthetic admin when auth is off), applies the rate limits, and guards
// each route by what it needs: any signed-in human, an admin, or — for pushing todos
// only — a workflow token as well.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { principalForToken, type IdentityDeps, type Principal } from '../identity/principal.js';
import { LIMITS, RateLimiter } from './rate-limit.js';

/** The board's session cookie (HttpOnly, SameSite=Lax): the board signs in with it, /ws reads it. */
export const SESSION_COOKIE = 'sb_session';

export type Access = 'human' | 'admin' | 'workflow';

export interface AuthDeps extends IdentityDeps {
  /** Set when SWITCHBOARD_AUTH=off: every request is this admin. */
  syntheticAdmin: Principal | null;
  nowMs: () => number;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

function tooMany(reply: FastifyReply, seconds: number): AppError {
  void reply.header('Retry-After', String(seconds));
  return new AppError('resource_exhausted', `rate limited: retry in ${seconds} s`, { retry_after_seconds: seconds });
}

export function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}

export function createAuth(deps: AuthDeps) {
  const perIp = new RateLimiter(LIMITS.perIp);
  const perCredential = new RateLimiter(LIMITS.perCredential);
  const signIn = new RateLimiter(LIMITS.signIn);

  /** Per-address limit, before any database work. */
  function limitIp(request: FastifyRequest, reply: FastifyReply): void {
    const wait = perIp.take(request.ip, deps.nowMs());
    if (wait > 0) throw tooMany(reply, wait);
  }

  function limitSignIn(request: FastifyRequest, reply: FastifyReply): void {
    const wait = signIn.take(request.ip, deps.nowMs());
    if (wait > 0) throw tooMany(reply, wait);
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply, access: Access): Promise<Principal> {
    limitIp(request, reply);
    let principal = deps.syntheticAdmin;
    if (!principal) {
      const bearer = bearerOf(request);
      principal = bearer ? await principalForToken(deps, bearer) : null;
    }
    if (!principal) {
      void reply.header('WWW-Authenticate', 'Bearer realm="switchboard"');
      throw new AppError('unauthenticated', 'sign in: send Authorization: Bearer sbt_… (see `switchboard login`)');
    }
    const wait = perCredential.take(principal.token?.id ?? principal.human.id, deps.nowMs());
    if (wait > 0) throw tooMany(reply, wait);
    if (principal.token?.kind === 'workflow' && access !== 'workflow') {
      throw new AppError(
        'forbidden',
        'a workflow token may only push todos to its human’s endpoints and queue messages into their sessions',
      );
    }
    if (access === 'admin' && principal.human.role !== 'admin') {
      throw new AppError('forbidden', 'this needs an admin');
    }
    request.principal = principal;
    return principal;
  }

  return { authenticate, limitIp, limitSignIn };
}

export type Auth = ReturnType<typeof createAuth>;
