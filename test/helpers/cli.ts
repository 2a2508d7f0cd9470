// Runs the compiled CLI (bin/switchboard.js, which `npm test` builds) as a child process
// with none of the caller's SWITCHBOARD_*/XDG_* variables: only what the test gives it;
// to the end (runCli), or left running while the test watches its stderr (startCli).

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(ROOT, 'bin/switchboard.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A CLI child still running: what it printed so far, a wait for a line of it, and its end. */
export interface CliChild {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the first match of `pattern` in stderr (progress goes there), or rejects after `ms`. */
  waitForStderr(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  done: Promise<CliRun>;
}

/** `switchboard ARGS` with `env` alone, left running (e.g. a login waiting for the browser). */
export function startCli(args: string[], env: Record<string, string>, input = ''): CliChild {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_') && !k.startsWith('XDG_')),
  );
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...inherited, ...env } });
  let stdout = '';
  let stderr = '';
  const watchers: Array<() => void> = [];
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
    for (const w of [...watchers]) w();
  });
  child.stdin.end(input);
  const done = new Promise<number | null>((resolve) => child.once('close', resolve)).then((code) => ({
    code,
    stdout,
    stderr,
  }));
  function waitForStderr(pattern: RegExp, ms = 30_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        watchers.splice(watchers.indexOf(check), 1);
        reject(new Error(`no ${pattern} on stderr within ${ms} ms; so far: ${stderr}`));
      }, ms);
      function check() {
        const match = pattern.exec(stderr);
        if (!match) return;
        clearTimeout(timer);
        watchers.splice(watchers.indexOf(check), 1);
        resolve(match);
      }
      watchers.push(check);
      check();
    });
  }
  return { child, waitForStderr, done };
}

/**
 * `switchboard ARGS` with `env` (e.g. XDG_CONFIG_HOME, SWITCHBOARD_TOKEN) alone; stdin
 * carries `input` and is then closed.
 */
export function runCli(args: string[], env: Record<string, string>, input = ''): Promise<CliRun> {
  return startCli(args, env, input).done;
}
