// The client side of OIDC sign-in (docs/design/oauth.md, "Human sign-in through OIDC"),
// done by openid-client: discovery (once, lazily, cached; retried after a failure), the
// authorization URL with state, nonce and a PKCE S256 challenge, and at the callback the
// code exchange with every check the library makes (issuer, state, the ID token's
// signature against the provider's keys, audience, expiry, nonce, PKCE). What it does not
// decide is who may come in: that is signin.ts. The library is loaded on the first
// sign-in, so an install without OIDC never loads it.

import type { Configuration } from 'openid-client';
import type { OidcConfig } from '../config/index.js';
import { OidcRefusal } from './refusal.js';

/** How long a started sign-in may take at the provider: its cookie's lifetime. */
export const OIDC_FLOW_TTL_SECONDS = 600;

/** What the browser keeps between /login/oidc and the callback (its HttpOnly cookie). */
export interface OidcFlow {
  state: string;
  nonce: string;
  verifier: string;
  /** The same-site path to return to. */
  next: string;
  /** When the flow started, epoch ms. */
  at: number;
}

/** What the provider vouched for, after the library's checks. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

type Client = typeof import('openid-client');

export class OidcProvider {
  private discovered: Promise<{ lib: Client; config: Configuration }> | null = null;

  constructor(
    readonly config: OidcConfig,
    /** <public URL>/login/oidc/callback, registered at the provider. */
    readonly redirectUri: string,
  ) {}

  get providerName(): string {
    return this.config.providerName;
  }

  /** The provider's metadata, fetched on first use and kept; a failure is forgotten so the next sign-in retries. */
  private configuration(): Promise<{ lib: Client; config: Configuration }> {
    if (!this.discovered) {
      const { issuer, clientId, clientSecret } = this.config;
      const insecure = new URL(issuer).protocol === 'http:';
      this.discovered = (async () => {
        const lib = await import('openid-client');
        const config = await lib.discovery(
          new URL(issuer),
          clientId,
          clientSecret ?? undefined,
          clientSecret ? lib.ClientSecretPost(clientSecret) : lib.None(),
          { timeout: 10, ...(insecure ? { execute: [lib.allowInsecureRequests] } : {}) },
        );
        return { lib, config };
      })().catch((err: unknown) => {
        this.discovered = null;
        throw new OidcRefusal(
          'provider_unavailable',
          `discovery at ${issuer} failed: ${(err as Error).message}`,
          `${this.providerName === 'your organisation' ? 'Your organisation’s sign-in' : this.providerName} cannot be reached right now; try again in a minute.`,
        );
      });
    }
    return this.discovered;
  }

  /** Starts a sign-in: where to send the browser, and what it keeps until it comes back. */
  async start(next: string, now: number): Promise<{ url: string; flow: OidcFlow }> {
    const { lib, config } = await this.configuration();
    const verifier = lib.randomPKCECodeVerifier();
    const flow: OidcFlow = { state: lib.randomState(), nonce: lib.randomNonce(), verifier, next, at: now };
    const url = lib.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: 'openid email profile',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await lib.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, flow };
  }

  /**
   * Finishes a sign-in at the callback URL the browser came back to, with the flow its
   * cookie kept. The state is compared here first so its mismatch is named; the library
   * compares it again with everything else.
   */
  async finish(callbackUrl: URL, flow: OidcFlow | null, now: number): Promise<OidcIdentity> {
    const generic = 'The sign-in did not complete (it expired or was already used); please try again.';
    if (!flow) throw new OidcRefusal('no_flow', 'no (readable) flow cookie at the callback', generic);
    if (now - flow.at > OIDC_FLOW_TTL_SECONDS * 1000) {
      throw new OidcRefusal('flow_expired', 'the flow cookie is older than its lifetime', generic);
    }
    const error = callbackUrl.searchParams.get('error');
    if (error) {
      throw new OidcRefusal(
        'provider_error',
        `the provider answered ${error}: ${callbackUrl.searchParams.get('error_description') ?? ''}`,
        `${this.providerName === 'your organisation' ? 'The sign-in' : this.providerName} did not sign you in (${error}).`,
      );
    }
    if (callbackUrl.searchParams.get('state') !== flow.state) {
      throw new OidcRefusal('state_mismatch', 'the callback state is not the one this browser started', generic);
    }
    const { lib, config } = await this.configuration();
    let tokens;
    try {
      tokens = await lib.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      // The library's own message is generic ("unexpected JWT claim value encountered");
      // the check that failed is named by its cause.
      const text = messages(err).join(': ');
      const reason = /"nonce"/.test(text) ? 'nonce_mismatch' : 'code_exchange_failed';
      throw new OidcRefusal(reason, `the code exchange was refused: ${text}`, generic);
    }
    const claims = tokens.claims();
    if (!claims) throw new OidcRefusal('no_id_token', 'the token answer carried no ID token', generic);
    let email = typeof claims.email === 'string' ? claims.email : null;
    let verified = claims.email_verified;
    let name = typeof claims.name === 'string' ? claims.name : null;
    // Most providers put the scope's claims in userinfo, not in the ID token of a code flow.
    if (email === null || verified === undefined) {
      const info = await lib.fetchUserInfo(config, tokens.access_token, claims.sub).catch((err: unknown) => {
        throw new OidcRefusal('userinfo_failed', `userinfo failed: ${(err as Error).message}`, generic);
      });
      email = typeof info.email === 'string' ? info.email : email;
      verified = info.email_verified ?? verified;
      name = typeof info.name === 'string' ? info.name : name;
    }
    // The standard says a JSON boolean; some providers send the string "true" (from userinfo
    // especially), which means the same. Anything else is not verified.
    return {
      issuer: claims.iss,
      subject: claims.sub,
      email,
      emailVerified: verified === true || verified === 'true',
      name,
    };
  }
}

/** An error's message and its causes', outermost first (a few levels at most). */
function messages(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) out.push(e.message);
  return out;
}
