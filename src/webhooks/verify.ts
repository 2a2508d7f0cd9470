// Signature checks for provider webhooks, each exactly as its provider documents it
// (docs/design/intake.md, "Verification"): on the raw body bytes, every comparison in
// constant time, any of the webhook's live secrets (the current one, and the previous one
// during a rotation grace) accepted. Pure: the clock is an argument. It decides; it does
// not count, log or persist (the ingest use case does).

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { keyOf } from '../hooks/sign.js';

export const SIGNED_PROVIDERS = ['github', 'gitlab', 'gitea', 'stripe', 'slack', 'standard'] as const;
export const PROVIDERS = ['token', ...SIGNED_PROVIDERS] as const;
export type Provider = (typeof PROVIDERS)[number];
export type SignedProvider = (typeof SIGNED_PROVIDERS)[number];

/**
 * Five minutes either way: Stripe's library default tolerance, Slack's documented replay
 * window, and the Standard Webhooks reference. Shorter refuses deliveries from senders
 * whose clocks drift; longer widens the window a captured delivery can be replayed in.
 */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

/** Why a delivery failed verification: the `reason` label of the verify-failure counter. */
export type VerifyFailure = 'missing_signature' | 'malformed_signature' | 'stale_timestamp' | 'bad_signature';

export type Verdict = { ok: true } | { ok: false; reason: VerifyFailure };

export interface SignedDelivery {
  /** A header by its lower-case name. */
  header: (name: string) => string | undefined;
  raw: Buffer;
  /** The instant, in seconds since the epoch. */
  nowSeconds: number;
}

const OK: Verdict = { ok: true };
const fail = (reason: VerifyFailure): Verdict => ({ ok: false, reason });

const hmac = (key: Buffer | string, ...parts: (string | Buffer)[]): Buffer => {
  const h = createHmac('sha256', key);
  for (const part of parts) h.update(part);
  return h.digest();
};

/** Equal in constant time for equal lengths; a different length is unequal (and says only its length). */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Equal text compared through its SHA-256, so neither length nor content leaks through timing. */
function sameText(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Hex text as bytes, or null when it is not hex of the given byte length. */
function hexBytes(text: string, bytes: number): Buffer | null {
  return new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(text) ? Buffer.from(text, 'hex') : null;
}

/** A Unix timestamp within the tolerance of now, or the failure. */
function fresh(text: string | undefined, nowSeconds: number): Verdict {
  if (text === undefined || !/^\d{1,12}$/.test(text))
    return fail(text === undefined ? 'missing_signature' : 'malformed_signature');
  return Math.abs(nowSeconds - Number(text)) > TIMESTAMP_TOLERANCE_SECONDS ? fail('stale_timestamp') : OK;
}

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`. */
function github(d: SignedDelivery, secrets: string[]): Verdict {
  const header = d.header('x-hub-signature-256');
  if (header === undefined) return fail('missing_signature');
  const given = header.startsWith('sha256=') ? hexBytes(header.slice(7), 32) : null;
  if (!given) return fail('malformed_signature');
  return secrets.some((s) => sameBytes(hmac(s, d.raw), given)) ? OK : fail('bad_signature');
}

/** Gitea and Forgejo: `X-Gitea-Signature` / `X-Forgejo-Signature`, bare hex HMAC-SHA256 of the body. */
function gitea(d: SignedDelivery, secrets: string[]): Verdict {
  const header = d.header('x-forgejo-signature') ?? d.header('x-gitea-signature');
  if (header === undefined) return fail('missing_signature');
  const given = hexBytes(header.trim(), 32);
  if (!given) return fail('malformed_signature');
  return secrets.some((s) => sameBytes(hmac(s, d.raw), given)) ? OK : fail('bad_signature');
}

/** GitLab: the secret token itself in `X-Gitlab-Token` (GitLab does not sign the body). */
function gitlab(d: SignedDelivery, secrets: string[]): Verdict {
  const header = d.header('x-gitlab-token');
  if (header === undefined) return fail('missing_signature');
  return secrets.some((s) => sameText(s, header)) ? OK : fail('bad_signature');
}

/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]`, each v1 an HMAC-SHA256 of
 * `<t>.<body>` keyed with the whole `whsec_…` secret as text; any v1 may match (Stripe
 * sends one per live secret during its own rotation); other schemes (v0) are ignored.
 */
function stripe(d: SignedDelivery, secrets: string[]): Verdict {
  const header = d.header('stripe-signature');
  if (header === undefined) return fail('missing_signature');
  let t: string | undefined;
  const v1: Buffer[] = [];
  for (const part of header.split(',')) {
    const [k, v] = part.split('=', 2).map((x) => x.trim());
    if (k === 't') t = v;
    if (k === 'v1' && v !== undefined) {
      const bytes = hexBytes(v, 32);
      if (bytes) v1.push(bytes);
    }
  }
  if (t === undefined || v1.length === 0) return fail('malformed_signature');
  const when = fresh(t, d.nowSeconds);
  if (!when.ok) return when;
  const ok = secrets.some((s) => {
    const expected = hmac(s, `${t}.`, d.raw);
    return v1.some((given) => sameBytes(expected, given));
  });
  return ok ? OK : fail('bad_signature');
}

/** Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256(secret, "v0:<ts>:<body>")>`, ts in X-Slack-Request-Timestamp. */
function slack(d: SignedDelivery, secrets: string[]): Verdict {
  const header = d.header('x-slack-signature');
  const ts = d.header('x-slack-request-timestamp');
  if (header === undefined || ts === undefined) return fail('missing_signature');
  const given = header.startsWith('v0=') ? hexBytes(header.slice(3), 32) : null;
  if (!given) return fail('malformed_signature');
  const when = fresh(ts, d.nowSeconds);
  if (!when.ok) return when;
  return secrets.some((s) => sameBytes(hmac(s, `v0:${ts}:`, d.raw), given)) ? OK : fail('bad_signature');
}

/**
 * Standard Webhooks: `webhook-signature: v1,<base64>[ v1,<base64>…]` over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64 bytes of a `whsec_`
 * secret (hooks/sign.ts signs the same way for notify hooks).
 */
function standard(d: SignedDelivery, secrets: string[]): Verdict {
  const id = d.header('webhook-id');
  const ts = d.header('webhook-timestamp');
  const header = d.header('webhook-signature');
  if (id === undefined || ts === undefined || header === undefined) return fail('missing_signature');
  const given = header
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'))
    .filter((b) => b.length === 32);
  if (given.length === 0) return fail('malformed_signature');
  const when = fresh(ts, d.nowSeconds);
  if (!when.ok) return when;
  const ok = secrets.some((s) => {
    const expected = hmac(keyOf(s), `${id}.${ts}.`, d.raw);
    return given.some((g) => sameBytes(expected, g));
  });
  return ok ? OK : fail('bad_signature');
}

const VERIFIERS: Record<SignedProvider, (d: SignedDelivery, secrets: string[]) => Verdict> = {
  github,
  gitlab,
  gitea,
  stripe,
  slack,
  standard,
};

/** Checks a delivery against a signed webhook's live secrets. */
export function verifyDelivery(provider: SignedProvider, secrets: string[], delivery: SignedDelivery): Verdict {
  if (secrets.length === 0) return fail('bad_signature');
  return VERIFIERS[provider](delivery, secrets);
}

export function isSigned(provider: Provider): provider is SignedProvider {
  return provider !== 'token';
}
