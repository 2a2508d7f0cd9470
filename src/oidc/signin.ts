// Who may come in through the provider, and as whom (docs/design/oauth.md, "Human sign-in
// through OIDC"). Only an e-mail the provider says it verified counts, and it must be in
// an allowed domain or on the allowed list, at every sign-in (an address the provider
// changes later is checked again). The human is the one linked to the provider account
// by (issuer, subject); else the one with that e-mail, linked now; else a new member,
// audited as a create. A disabled human is refused, as their password is.

import { withTx } from '../db/pool.js';
import { newId } from '../domain/ids.js';
import type { Human } from '../store/humans.js';
import { insertHumanAudit } from '../store/human-lifecycle.js';
import { findHumanByOidc, insertOidcHuman, linkHumanToOidc, lockHumanByEmail } from '../store/oidc.js';
import type { IdentityDeps } from '../identity/principal.js';
import type { OidcIdentity } from './provider.js';
import { OidcRefusal } from './refusal.js';

/** Who may sign in: lower-cased domains and addresses (SWITCHBOARD_OIDC_ALLOWED_*). */
export interface OidcAllow {
  allowedDomains: string[];
  allowedEmails: string[];
}

/** Whether this e-mail is in an allowed domain (exactly, not a subdomain) or on the list. */
export function emailAllowed(email: string, allow: OidcAllow): boolean {
  const lower = email.toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at <= 0) return false;
  return allow.allowedEmails.includes(lower) || allow.allowedDomains.includes(lower.slice(at + 1));
}

const NOT_ALLOWED = 'This account is not allowed to sign in here; ask an admin of this Switchboard.';

/** The e-mail to sign in with, once it is verified and allowed; else the refusal naming why. */
export function checkIdentity(who: OidcIdentity, allow: OidcAllow): string {
  if (!who.email) {
    throw new OidcRefusal(
      'no_email',
      `subject ${who.subject} of ${who.issuer} has no email claim`,
      'Your account at the provider shares no e-mail address, which signing in here needs.',
    );
  }
  if (!who.emailVerified) {
    throw new OidcRefusal(
      'email_unverified',
      `${who.email} (subject ${who.subject}) is not email_verified`,
      `The provider has not verified your e-mail address ${who.email}, so it cannot sign you in here; verify it there first.`,
    );
  }
  if (!emailAllowed(who.email, allow)) {
    throw new OidcRefusal(
      'not_allowed',
      `${who.email} is in no allowed domain and not on the allowed list`,
      NOT_ALLOWED,
    );
  }
  return who.email;
}

/**
 * The active human this provider account signs in as, linking or creating them in one
 * transaction (the e-mail's row is locked, so two first sign-ins link once; two that
 * both create meet the unique e-mail index and the loser reads the winner's row).
 */
export async function humanForOidc(deps: IdentityDeps, who: OidcIdentity, allow: OidcAllow): Promise<Human> {
  const email = checkIdentity(who, allow);
  try {
    return await resolve(deps, who, email);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'conflict') throw err;
    return resolve(deps, who, email);
  }
}

function active(human: Human): Human {
  if (human.state !== 'active') {
    throw new OidcRefusal('disabled', `human ${human.id} (${human.email}) is disabled`, NOT_ALLOWED);
  }
  const { id, email, display_name, role, state, created_at } = human;
  return { id, email, display_name, role, state, created_at };
}

async function resolve(deps: IdentityDeps, who: OidcIdentity, email: string): Promise<Human> {
  return withTx(deps.db, async (tx) => {
    const linked = await findHumanByOidc(tx, who.issuer, who.subject);
    if (linked) return active(linked);
    const byEmail = await lockHumanByEmail(tx, email);
    if (byEmail) {
      // Linked to another account of this provider: that account is theirs, not this one.
      // A link to another issuer is from a provider no longer configured, and is replaced.
      if (byEmail.oidc_issuer === who.issuer) {
        throw new OidcRefusal(
          'linked_elsewhere',
          `${email} is human ${byEmail.id}, linked to subject ${byEmail.oidc_subject} of ${byEmail.oidc_issuer}, not ${who.subject}`,
          NOT_ALLOWED,
        );
      }
      const human = active(byEmail);
      await linkHumanToOidc(tx, human.id, who.issuer, who.subject);
      return human;
    }
    const made = await insertOidcHuman(tx, {
      id: newId('hu'),
      email,
      displayName: (who.name ?? '').trim().slice(0, 100),
      role: 'member',
      issuer: who.issuer,
      subject: who.subject,
    });
    // The audit's actor is the human themselves: nobody else made them (docs/design/people.md, "The audit").
    await insertHumanAudit(tx, {
      humanId: made.id,
      actorHumanId: made.id,
      action: 'create',
      detail: { email: made.email, role: made.role, via: 'oidc', issuer: who.issuer },
    });
    return made;
  });
}
