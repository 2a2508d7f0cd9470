// The sign-in variables (docs/design/oauth.md, "Human sign-in through OIDC"): OIDC and
// whether passwords still work beside it; the checks that span them, and the OIDC slice
// of the config. Part of the environment schema (src/config/schema.ts); pure.

import { z } from 'zod';
import { domainList, emailList, isLoopbackHost } from './fields.js';

export const OIDC_VARS = {
  // Human sign-in through the organisation's OIDC provider (docs/design/oauth.md, "Human
  // sign-in through OIDC"): off unless an issuer is set, since most installs start with
  // passwords alone. The issuer is https, or http on a loopback host (a provider on the
  // same machine, as the tests run one); the client is registered at the provider with the
  // redirect URI <public URL>/login/oidc/callback. Without a secret the client is public
  // and PKCE alone binds the code to it.
  SWITCHBOARD_OIDC_ISSUER: z
    .string()
    .refine(
      (v) =>
        URL.canParse(v) &&
        (new URL(v).protocol === 'https:' ||
          (new URL(v).protocol === 'http:' && isLoopbackHost(new URL(v).hostname.replace(/^\[|\]$/g, '')))),
      'must be an https URL (http only on a loopback host)',
    )
    .optional(),
  SWITCHBOARD_OIDC_CLIENT_ID: z.string().min(1).optional(),
  SWITCHBOARD_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  // The name on the sign-in button ("Sign in with …"); unset: "your organisation".
  SWITCHBOARD_OIDC_PROVIDER_NAME: z.string().trim().min(1).max(60).optional(),
  // Who may sign in through the provider: a verified e-mail in one of these domains or on
  // this list. Empty both is refused with an issuer set: a provider like a public one
  // would otherwise let anyone with an account in.
  SWITCHBOARD_OIDC_ALLOWED_DOMAINS: domainList,
  SWITCHBOARD_OIDC_ALLOWED_EMAILS: emailList,
  // On: passwords keep working beside OIDC (the first admin's setup link sets one). Off
  // refuses password sign-in on the board and the API; refused unless OIDC is set, so it
  // can never lock everyone out.
  SWITCHBOARD_PASSWORD_SIGNIN: z.enum(['on', 'off']).default('on'),
};

type OidcVars = z.infer<z.ZodObject<typeof OIDC_VARS>>;

export interface OidcConfig {
  issuer: string;
  clientId: string;
  /** null: a public client (PKCE alone, token endpoint auth `none`). */
  clientSecret: string | null;
  /** The button's "Sign in with …" name. */
  providerName: string;
  /** Lower-cased e-mail domains and addresses allowed to sign in. */
  allowedDomains: string[];
  allowedEmails: string[];
}

export /** OIDC is all or nothing, allows someone, and password sign-in is off only beside it. */
function oidcProblems(e: OidcVars): string[] {
  const problems: string[] = [];
  const on = e.SWITCHBOARD_OIDC_ISSUER !== undefined;
  if (on && e.SWITCHBOARD_OIDC_CLIENT_ID === undefined) {
    problems.push(
      'SWITCHBOARD_OIDC_CLIENT_ID: required with SWITCHBOARD_OIDC_ISSUER (the client registered at the provider)',
    );
  }
  if (!on) {
    for (const name of [
      'SWITCHBOARD_OIDC_CLIENT_ID',
      'SWITCHBOARD_OIDC_CLIENT_SECRET',
      'SWITCHBOARD_OIDC_PROVIDER_NAME',
    ] as const) {
      if (e[name] !== undefined) problems.push(`${name}: set without SWITCHBOARD_OIDC_ISSUER, which turns OIDC on`);
    }
    for (const name of ['SWITCHBOARD_OIDC_ALLOWED_DOMAINS', 'SWITCHBOARD_OIDC_ALLOWED_EMAILS'] as const) {
      if (e[name].length > 0) problems.push(`${name}: set without SWITCHBOARD_OIDC_ISSUER, which turns OIDC on`);
    }
  }
  if (on && e.SWITCHBOARD_OIDC_ALLOWED_DOMAINS.length === 0 && e.SWITCHBOARD_OIDC_ALLOWED_EMAILS.length === 0) {
    problems.push(
      'SWITCHBOARD_OIDC_ALLOWED_DOMAINS: set it or SWITCHBOARD_OIDC_ALLOWED_EMAILS with SWITCHBOARD_OIDC_ISSUER: without either, anyone with an account at the provider could sign in',
    );
  }
  if (e.SWITCHBOARD_PASSWORD_SIGNIN === 'off' && !on) {
    problems.push(
      'SWITCHBOARD_PASSWORD_SIGNIN: "off" is refused without SWITCHBOARD_OIDC_ISSUER: nobody could sign in; configure OIDC first',
    );
  }
  return problems;
}

export function oidcConfig(e: OidcVars): OidcConfig | null {
  if (e.SWITCHBOARD_OIDC_ISSUER === undefined || e.SWITCHBOARD_OIDC_CLIENT_ID === undefined) return null;
  return {
    issuer: e.SWITCHBOARD_OIDC_ISSUER,
    clientId: e.SWITCHBOARD_OIDC_CLIENT_ID,
    clientSecret: e.SWITCHBOARD_OIDC_CLIENT_SECRET ?? null,
    providerName: e.SWITCHBOARD_OIDC_PROVIDER_NAME ?? 'your organisation',
    allowedDomains: e.SWITCHBOARD_OIDC_ALLOWED_DOMAINS,
    allowedEmails: e.SWITCHBOARD_OIDC_ALLOWED_EMAILS,
  };
}
