// Standard Webhooks signing (https://www.standardwebhooks.com): a `whsec_` secret of 32
// random bytes, and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
// with the secret's decoded bytes as the key. During a rotation grace the header carries
// one signature per live secret, space-separated, so a receiver holding either verifies.

import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newHookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a Standard Webhooks secret: the base64 after `whsec_` (webhooks/verify.ts checks with it too). */
export function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signedHeaders(secrets: string[], id: string, timestamp: number, body: string): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, id, timestamp, body)).join(' '),
  };
}
