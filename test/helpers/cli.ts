// Runs the compiled CLI (bin/switchboard.js, which `npm test` builds) as a child process
// with none of the caller's SWITCHBOARD_*/XDG_* variables: only what the test gives it.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(ROOT, 'bin/switchboard.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `switchboard ARGS`, its stdin closed, with `env` (e.g. XDG_CONFIG_HOME, SWITCHBOARD_TOKEN) alone. */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_') && !k.startsWith('XDG_')),
  );
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...inherited, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}
