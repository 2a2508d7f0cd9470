// Why an OIDC sign-in was refused: `reason` and `detail` for the log (precise), `message`
// for the person on the sign-in page (useful, but no more than they need).

export type OidcRefusalReason =
  | 'provider_unavailable'
  | 'provider_error'
  | 'no_flow'
  | 'flow_expired'
  | 'state_mismatch'
  | 'nonce_mismatch'
  | 'code_exchange_failed'
  | 'no_id_token'
  | 'userinfo_failed'
  | 'no_email'
  | 'email_unverified'
  | 'not_allowed'
  | 'disabled'
  | 'linked_elsewhere';

export class OidcRefusal extends Error {
  constructor(
    readonly reason: OidcRefusalReason,
    readonly detail: string,
    /** Shown on the sign-in page. */
    readonly userMessage: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'OidcRefusal';
  }
}
