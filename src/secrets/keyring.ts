// Signing secrets at rest (docs/design/intake.md, "Secrets at rest"): a webhook's and a
// notify hook's signing secret must be readable to verify or sign, so they cannot be
// hashed; with a server key they are stored sealed, `enc:v1:<key id>:<base64 of a
// 12-byte IV, the AES-256-GCM ciphertext and its 16-byte tag>`. The key id (8 hex of the
// key's SHA-256) names which key sealed a value, so a value the keyring cannot open is a
// clear error, never a wrong signature. A value without the prefix is one stored before
// a key was configured: it is read as is, and resealed at the next start with a key.
// Pure but for the key file (loadKeyring).

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SEALED_PREFIX = 'enc:v1:';

export interface Keyring {
  /** Seals new values; null: none configured (values are stored as issued). */
  current: { id: string; key: Buffer } | null;
  /** Keys that still open values (the current one and SWITCHBOARD_SECRET_KEY_PREVIOUS). */
  opens: ReadonlyMap<string, Buffer>;
}

export const NO_KEYRING: Keyring = { current: null, opens: new Map() };

export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** A 32-byte key from its base64 (or 64-hex) text, or null when it is not one. */
export function parseKey(text: string): Buffer | null {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  return key.length === 32 ? key : null;
}

export function keyringOf(current: Buffer | null, previous: Buffer[] = []): Keyring {
  const opens = new Map<string, Buffer>();
  for (const key of [...(current ? [current] : []), ...previous]) opens.set(keyId(key), key);
  return { current: current ? { id: keyId(current), key: current } : null, opens };
}

/** The stored form of a secret: sealed under the current key, or as issued when there is none. */
export function seal(keyring: Keyring, plaintext: string): string {
  if (!keyring.current) return plaintext;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const sealed = Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
  return `${SEALED_PREFIX}${keyring.current.id}:${sealed}`;
}

/** A stored secret as issued; throws when it was sealed under a key this keyring lacks. */
export function open(keyring: Keyring, stored: string): string {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  const [id = '', data = ''] = stored.slice(SEALED_PREFIX.length).split(':', 2);
  const key = keyring.opens.get(id);
  if (!key) throw new Error(`a signing secret is sealed under key ${id}, which is not configured`);
  const bytes = Buffer.from(data, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
}

/** Whether a stored value should be rewritten: not sealed under the current key (legacy text, or a previous key). */
export function needsReseal(keyring: Keyring, stored: string): boolean {
  return keyring.current !== null && !stored.startsWith(`${SEALED_PREFIX}${keyring.current.id}:`);
}

export interface KeySettings {
  key: string | null;
  keyFile: string | null;
  previous: string | null;
  /** The data directory: with no key given, an embedded install keeps a generated one here. */
  dataDir: string;
  /** The embedded PostgreSQL: its data dir is ours, so a generated key may live beside it. */
  embedded: boolean;
}

/** The file an embedded install's generated key is kept in (0600, created once). */
export const GENERATED_KEY_FILE = 'secret.key';

/**
 * The server's keyring: SWITCHBOARD_SECRET_KEY, else the file SWITCHBOARD_SECRET_KEY_FILE
 * names, else (embedded only) the data dir's secret.key, generated on the first start;
 * else none. Throws a message naming the setting when a given key is not 32 bytes.
 */
export async function loadKeyring(s: KeySettings): Promise<Keyring> {
  const previous = s.previous === null ? [] : [mustParse(s.previous, 'SWITCHBOARD_SECRET_KEY_PREVIOUS')];
  if (s.key !== null) return keyringOf(mustParse(s.key, 'SWITCHBOARD_SECRET_KEY'), previous);
  if (s.keyFile !== null) {
    const text = await readFile(s.keyFile, 'utf8');
    return keyringOf(mustParse(text, `SWITCHBOARD_SECRET_KEY_FILE (${s.keyFile})`), previous);
  }
  if (!s.embedded) return keyringOf(null, previous);
  const path = join(s.dataDir, GENERATED_KEY_FILE);
  const existing = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (existing !== null) return keyringOf(mustParse(existing, path), previous);
  const key = randomBytes(32);
  await mkdir(s.dataDir, { recursive: true });
  await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(path, 0o600);
  return keyringOf(key, previous);
}

function mustParse(text: string, where: string): Buffer {
  const key = parseKey(text);
  if (!key) throw new Error(`${where}: not a 32-byte key (base64 or 64 hex digits)`);
  return key;
}
