// The saved login: {url, token} as JSON at <config dir>/switchboard/credentials.json,
// the file 0600 and its directory 0700 so no other local user can read the token. Owns
// the file format and permissions; does not decide which URL or token a command uses
// (client.ts does) and never talks to the server.

import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, EXIT } from './exit.js';

export interface Credentials {
  url: string;
  token: string;
}

export function credentialsPath(configDir: string): string {
  return join(configDir, 'switchboard', 'credentials.json');
}

/** Writes through a 0600 temporary file and a rename, so a crash never leaves half a file. */
export async function saveCredentials(configDir: string, credentials: Credentials): Promise<string> {
  const dir = join(configDir, 'switchboard');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const path = credentialsPath(configDir);
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.chmod(0o600);
    await file.writeFile(JSON.stringify({ url: credentials.url, token: credentials.token }, null, 2) + '\n');
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  return path;
}

/** The saved login, or null when there is none. A damaged file is an error naming it. */
export async function loadCredentials(configDir: string): Promise<Credentials | null> {
  const path = credentialsPath(configDir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const damaged = () =>
    new CliError(`${path} is not a saved login: delete it and run \`switchboard login\``, EXIT.failure);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw damaged();
  }
  const { url, token } = (parsed ?? {}) as Partial<Record<keyof Credentials, unknown>>;
  if (typeof url !== 'string' || typeof token !== 'string' || url === '' || token === '') throw damaged();
  return { url, token };
}

/** Removes the saved login; answers whether there was one. */
export async function deleteCredentials(configDir: string): Promise<boolean> {
  const path = credentialsPath(configDir);
  try {
    await rm(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new CliError(`cannot delete ${path}: ${(err as Error).message}`);
  }
}
