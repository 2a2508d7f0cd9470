// Authentication and authorisation for /api/v1: resolves the caller (an `sbt_` API
// token, or the synthetic admin when auth is off), applies the rate limits, and guards
// each route by what it needs: any signed-in human, an admin, or — for pushing todos
// only — a workflow token as well.

import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../domain/errors.js';
import { principalForToken, type Principal, type TokenDeps } from '../identity/principal.js';
import { originAllowed } from './hosts.js';
import {
  accountKey,
  addressKey,
  RateLimiter,
  rateLimitFields,
  type BucketSpec,
  type NamedState,
} from './rate-limit.js';

/**
 * The board's cookie names. The session cookie (HttpOnly, SameSite=Lax): the board signs
 * in with it, /ws reads it; the login form's CSRF cookie; with auth off, the synthetic
 * admin's CSRF cookie. When SWITCHBOARD_PUBLIC_URL is https every one is Secure, Path=/
 * and has no Domain, so each carries the `__Host-` prefix: a browser then refuses the
 * name from a plain-http page or a sibling subdomain, which cannot plant or shadow it
 * (docs/board.md). A plain-http public URL keeps the unprefixed names, which a browser
 * would not accept with the prefix. Writers and readers take the names from here, from
 * the public URL alone, so they always agree.
 */
export function boardCookies(publicUrl: string): {
  secure: boolean;
  session: string;
  loginCsrf: string;
  localCsrf: string;
  /** A started OIDC sign-in (docs/design/oauth.md, "Human sign-in through OIDC"). */
  oidc: string;
} {
  const secure = publicUrl.startsWith('https:');
  const prefix = secure ? '__Host-' : '';
  return {
    secure,
    session: `${prefix}sb_session`,
    loginCsrf: `${prefix}sb_login_csrf`,
    localCsrf: `${prefix}sb_local_csrf`,
    oidc: `${prefix}sb_oidc`,
  };
}

export type Access = 'human' | 'admin' | 'workflow';

export interface AuthDeps extends TokenDeps {
  /** Set when SWITCHBOARD_AUTH=off: every request is this admin. */
  syntheticAdmin: Principal | null;
  nowMs: () => number;
  /** The operator API's and sign-in's limits (SWITCHBOARD_API_RATE…, SWITCHBOARD_SIGNIN_…), from the config. */
  limits: { perCredential: BucketSpec; perIp: BucketSpec; signIn: BucketSpec };
  /** The whole origins this server goes by (config.allowedOrigins): with auth off, a change must come from one. */
  allowedOrigins: readonly string[];
}

/** Methods that only read: with auth off they are answered whatever site asks. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * With auth off every request is the admin, so a page on any site could change things
 * through the visitor's browser: a body-less POST or a form needs no CORS preflight
 * (docs/design/limits.md, "Host and Origin"). A request that changes something is
 * refused when the browser says it came from elsewhere: `Sec-Fetch-Site` other than
 * `same-origin` or `none` (a page on another port of localhost is `same-site`), or an
 * `Origin` that is not one of this server's. Clients that send neither (the CLI, curl,
 * scripts) are not browsers and go through.
 */
function crossSiteProblem(request: FastifyRequest, origins: readonly string[]): string | null {
  if (SAFE_METHODS.has(request.method)) return null;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `Sec-Fetch-Site: ${String(site)}: with auth off only this server's own pages may change things`;
  }
  const check = { origins, host: request.headers.host, protocol: request.protocol };
  if (!originAllowed(request.headers.origin, check)) {
    return "Origin: not this server; with auth off only this server's own pages may change things";
  }
  return null;
}

/**
 * How much later a wrong password is answered once its account has spent its failure
 * budget across all addresses (docs/design/limits.md, "Sign-in throttle"): long enough
 * that each connection a guesser holds gets one guess per 2 s, short enough that the
 * owner mistyping once is hardly delayed.
 */
export const SIGNIN_SLOWDOWN_MS = 2_000;

/** One password sign-in attempt under the throttle: say how it ended. */
export interface SignInAttempt {
  /** The password was right: the attempt costs no failure. */
  succeeded(): void;
  /** It was wrong (or refused): resolves when the answer may go, later past the account's budget. */
  failed(err: unknown): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Every answer that went through a limit says where the caller stands (docs/api.md, "Rate limits"). */
function announce(reply: FastifyReply, limits: NamedState[]): void {
  const fields = rateLimitFields(limits);
  void reply.header('RateLimit-Policy', fields.policy);
  void reply.header('RateLimit', fields.limit);
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
  const perIp = new RateLimiter(deps.limits.perIp);
  const perCredential = new RateLimiter(deps.limits.perCredential);
  // Failures per address, per (account, address), and per account across addresses: the
  // first two refuse (429) that address, the last only slows the answers down, so no one
  // can lock an account out by guessing at it.
  const signIn = new RateLimiter(deps.limits.signIn);
  const signInPair = new RateLimiter(deps.limits.signIn);
  const signInAccount = new RateLimiter(deps.limits.signIn);

  /** Spends one token of `limiter` for `key`; announces `shown` plus this limit; throws 429 when empty. */
  function spend(
    reply: FastifyReply,
    limiter: RateLimiter,
    named: Omit<NamedState, 'state'> & { key: string },
    shown: NamedState[] = [],
  ): NamedState {
    const state = { name: named.name, spec: named.spec, state: limiter.check(named.key, deps.nowMs()) };
    announce(reply, [...shown, state]);
    if (state.state.waitSeconds > 0) throw tooMany(reply, state.state.waitSeconds);
    return state;
  }

  /** Per-address limit (an IPv6 address by its /64), before any database work. */
  function limitIp(request: FastifyRequest, reply: FastifyReply): NamedState {
    return spend(reply, perIp, { name: 'ip', spec: deps.limits.perIp, key: addressKey(request.ip) });
  }

  /**
   * An attempt that names no account (a setup link, a code exchange, the current password
   * of a password change): one token of the address's bucket (by /64), before anything is
   * read.
   */
  function limitSignIn(request: FastifyRequest, reply: FastifyReply): void {
    spend(reply, signIn, { name: 'signin', spec: deps.limits.signIn, key: addressKey(request.ip) });
  }

  /**
   * A password sign-in (docs/design/limits.md, "Sign-in throttle"): one token of the
   * address's bucket and one of the (account, address) bucket, both before anything is
   * read, so the 429 (the same words for either) is spent and answered alike whether the
   * account exists or not; a right password gives both back, so only failures count. A
   * wrong one also spends the account's bucket across addresses; once that is empty the
   * failure is answered SIGNIN_SLOWDOWN_MS later, never refused: the owner's right
   * password from their own address still signs in.
   */
  function signInAttempt(request: FastifyRequest, reply: FastifyReply, email: unknown): SignInAttempt {
    const spec = deps.limits.signIn;
    const address = addressKey(request.ip);
    const ip = spend(reply, signIn, { name: 'signin', spec, key: address });
    const account = accountKey(email);
    const pair = account === null ? null : `${account} ${address}`;
    try {
      if (pair !== null) spend(reply, signInPair, { name: 'signin-account', spec, key: pair }, [ip]);
    } catch (err) {
      signIn.refund(address);
      throw err;
    }
    return {
      succeeded() {
        signIn.refund(address);
        if (pair !== null) signInPair.refund(pair);
      },
      async failed(err) {
        if (account === null || !isAppError(err, 'unauthenticated')) return;
        if (signInAccount.take(account, deps.nowMs()) > 0) await sleep(SIGNIN_SLOWDOWN_MS);
      },
    };
  }

  /** Runs a password sign-in under signInAttempt's throttle. */
  async function throttledSignIn<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    email: unknown,
    run: () => Promise<T>,
  ): Promise<T> {
    const attempt = signInAttempt(request, reply, email);
    try {
      const result = await run();
      attempt.succeeded();
      return result;
    } catch (err) {
      await attempt.failed(err);
      throw err;
    }
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply, access: Access): Promise<Principal> {
    const ip = limitIp(request, reply);
    if (deps.syntheticAdmin) {
      const problem = crossSiteProblem(request, deps.allowedOrigins);
      if (problem) throw new AppError('forbidden', problem);
    }
    let principal: Principal | 'expired' | null = deps.syntheticAdmin;
    if (!principal) {
      const bearer = bearerOf(request);
      principal = bearer ? await principalForToken(deps, bearer) : null;
    }
    if (principal === 'expired') {
      void reply.header('WWW-Authenticate', 'Bearer realm="switchboard"');
      throw new AppError(
        'unauthenticated',
        'this login token expired: it was unused for longer than SWITCHBOARD_TOKEN_TTL; sign in again',
        {
          reason: 'token_expired',
        },
      );
    }
    if (!principal) {
      void reply.header('WWW-Authenticate', 'Bearer realm="switchboard"');
      throw new AppError('unauthenticated', 'sign in: send Authorization: Bearer sbt_… (see `switchboard login`)');
    }
    // A workflow token spends its human's bucket: minting N of them must not give N× the rate.
    const key =
      principal.token?.kind === 'workflow'
        ? `human:${principal.human.id}`
        : (principal.token?.id ?? principal.human.id);
    spend(reply, perCredential, { name: 'cred', spec: deps.limits.perCredential, key }, [ip]);
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

  return { authenticate, limitIp, limitSignIn, signInAttempt, throttledSignIn };
}

export type Auth = ReturnType<typeof createAuth>;
