// Secrets: random bearer tokens (stored as SHA-256, compared by hash lookup) and
// passwords (scrypt with a per-password salt, compared in constant time).

import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// sbo_ / sbr_ / sbc_: OAuth access and refresh tokens and authorization codes (docs/design/oauth.md).
// sbl_: the one-time codes of `switchboard login --web` (docs/design/cli-login.md).
export type SecretPrefix = 'sbk' | 'sbt' | 'sbs' | 'sbw' | 'sbx' | 'sbo' | 'sbr' | 'sbc' | 'sbl';

/** 32 random bytes: guessing one is hopeless, so a fast hash at rest is enough. */
export function newSecret(prefix: SecretPrefix): { secret: string; hash: Buffer } {
  const secret = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A display hint such as `sbk_ab12cd…`: enough to recognise, never to use. */
export function secretPrefix(secret: string): string {
  return `${secret.slice(0, 10)}…`;
}

// N=2^15 costs ~50 ms and 32 MiB per hash here: slow for a guesser, fine for a sign-in.
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, length: number, params: typeof SCRYPT): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, params, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$key`, all parameters kept so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, KEY_LENGTH, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const params = { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem };
  const actual = await derive(password, Buffer.from(salt, 'base64url'), expected.length, params);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A stored hash to verify against when the email is unknown (or has no password), so
 * both paths run one scrypt with the same parameters and take as long. Only its shape
 * matters: a random salt and key no password derives, built at load without hashing
 * anything — so not even the first unknown email pays an extra hash.
 */
export const DECOY_PASSWORD_HASH = [
  'scrypt',
  SCRYPT.N,
  SCRYPT.r,
  SCRYPT.p,
  randomBytes(16).toString('base64url'),
  randomBytes(KEY_LENGTH).toString('base64url'),
].join('$');
