// The OAuth authorization server's machine-facing routes (docs/design/oauth.md, "Routes"):
// discovery (RFC 9728, RFC 8414), registration (RFC 7591), the token endpoint and
// revocation (RFC 7009). Hand-written on Fastify — the MCP SDK's server router is Express —
// with the SDK's schemas shaping every document. Outside /api/v1 on purpose: clients find
// these at the URLs the RFCs fix, they take no Switchboard credential, and the token and
// revocation endpoints take the form bodies OAuth requires (in this context only: /api/v1
// still takes JSON alone). Errors are OAuth's `{ error, error_description }`, never the
// API's body, and no answer may be cached (RFC 6749 §5.1).

import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressKey, RateLimiter, type BucketSpec } from '../http/rate-limit.js';
import { registerClient } from '../oauth/clients.js';
import type { OAuthDeps } from '../oauth/deps.js';
import { OAuthError } from '../oauth/errors.js';
import { authorizationServerMetadata, protectedResourceMetadata } from '../oauth/metadata.js';
import { revokeToken, tokenRequest } from '../oauth/tokens.js';

function oauthError(reply: FastifyReply, err: unknown) {
  if (!(err instanceof OAuthError)) throw err;
  if (err.status === 401) void reply.header('WWW-Authenticate', 'Bearer realm="switchboard"');
  return reply.status(err.status).header('Cache-Control', 'no-store').send(err.body);
}

/** The routes a page on any origin may call, and their methods (preflight answers). */
const CORS_ROUTES: Array<[path: string, methods: string]> = [
  ['/.well-known/oauth-protected-resource/mcp', 'GET'],
  ['/.well-known/oauth-protected-resource', 'GET'],
  ['/.well-known/oauth-authorization-server', 'GET'],
  ['/oauth/register', 'POST'],
  ['/oauth/token', 'POST'],
  ['/oauth/revoke', 'POST'],
];

/**
 * Per-address limits (docs/design/oauth.md, "Limits and retention"): registration is a
 * public write with its own small bucket; the token and revocation endpoints take the
 * operator API's per-address bucket. Both are spent before anything is read.
 */
export interface OAuthLimits {
  register: BucketSpec;
  perIp: BucketSpec;
}

export function oauthRoutes(app: FastifyInstance, deps: OAuthDeps, limits: OAuthLimits, now: () => Date): void {
  const registrations = new RateLimiter(limits.register);
  const perIp = new RateLimiter(limits.perIp);
  /** Spends a token of `limiter` for the caller's address; throws the OAuth-shaped 429 when empty. */
  const limit = (limiter: RateLimiter, setting: string) => (request: FastifyRequest, reply: FastifyReply) => {
    const wait = limiter.take(addressKey(request.ip), now().getTime());
    if (wait === 0) return;
    void reply.header('Retry-After', String(wait));
    throw new OAuthError(
      'temporarily_unavailable',
      `too many requests from this address: retry in ${wait} s (${setting})`,
      429,
    );
  };
  const limitRegister = limit(registrations, 'SWITCHBOARD_OAUTH_REGISTER_PER_MINUTE');
  const limitToken = limit(perIp, 'SWITCHBOARD_API_RATE_PER_IP');
  const resource = protectedResourceMetadata(deps.publicUrl);
  const server = authorizationServerMetadata(deps.publicUrl);

  void app.register(async (scope) => {
    await scope.register(formbody);
    // CORS (docs/design/oauth.md, "Browser clients"): a client running in a web page (the
    // MCP Inspector, a hosted chat's connector set-up) discovers, registers and exchanges
    // codes from the browser. These routes take no cookie and no ambient credential — the
    // token endpoint's proof is the code and its PKCE verifier in the body — so any origin
    // may read their answers. The board's consent page and /mcp keep their own rules.
    scope.addHook('onSend', async (_request, reply) => {
      void reply.header('Access-Control-Allow-Origin', '*');
      void reply.header('Access-Control-Expose-Headers', 'Retry-After, WWW-Authenticate');
    });
    for (const [path, methods] of CORS_ROUTES) {
      scope.options(path, async (_request, reply) =>
        reply
          .status(204)
          .header('Access-Control-Allow-Methods', `${methods}, OPTIONS`)
          .header('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version')
          .header('Access-Control-Max-Age', '86400')
          .send(),
      );
    }
    // RFC 9728 §3.1: the resource /mcp's metadata sits at the path-suffixed URL; the bare one
    // answers too, for clients that look there first.
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      scope.get(path, async (_request, reply) => reply.header('Cache-Control', 'max-age=3600').send(resource));
    }
    scope.get('/.well-known/oauth-authorization-server', async (_request, reply) =>
      reply.header('Cache-Control', 'max-age=3600').send(server),
    );
    scope.post('/oauth/register', async (request, reply) => {
      try {
        limitRegister(request, reply);
        const client = await registerClient(deps, request.body);
        return reply.status(201).header('Cache-Control', 'no-store').send(client);
      } catch (err) {
        return oauthError(reply, err);
      }
    });
    scope.post<{ Body: Record<string, unknown> }>('/oauth/token', async (request, reply) => {
      try {
        limitToken(request, reply);
        const tokens = await tokenRequest(deps, request.body, now());
        return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(tokens);
      } catch (err) {
        return oauthError(reply, err);
      }
    });
    scope.post<{ Body: Record<string, unknown> }>('/oauth/revoke', async (request, reply) => {
      try {
        limitToken(request, reply);
        await revokeToken(deps, request.body);
        return reply.header('Cache-Control', 'no-store').send({});
      } catch (err) {
        return oauthError(reply, err);
      }
    });
  });
}
