// `switchboard login`, `logout` and `whoami`: exchanging an email and password for an
// API token saved 0600 (credentials.ts), revoking it, and saying who the token acts as.
// Prompts go to stderr so stdout stays clean for --json. Does not create humans (that
// is the setup URL or an admin's `POST /api/v1/humans`).

import { hostname } from 'node:os';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { loadCliEnv } from '../config/cli.js';
import { ApiError, apiClient, normalizeUrl, resolveTarget, signedInClient } from './client.js';
import { credentialsPath, deleteCredentials, loadCredentials, saveCredentials } from './credentials.js';
import { CliError, EXIT } from './exit.js';
import { apiCommand, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues } from './output.js';

interface Human {
  id: string;
  email: string;
  display_name: string | null;
  role: string;
}

interface LoginOptions extends CommonOptions {
  email?: string;
  passwordStdin?: boolean;
}

export function registerAuth(program: Command): void {
  apiCommand(program, 'login', 'sign in and save an API token for the other commands (file mode 0600)')
    .option('--email <EMAIL>', 'your email (prompted for on a terminal)')
    .option('--password-stdin', 'read the password from stdin instead of prompting (for scripts)')
    .action(run(login));
  apiCommand(program, 'logout', 'revoke the saved token and delete it').action(run(logout));
  apiCommand(program, 'whoami', 'show who the saved token signs in as').action(run(whoami));
}

async function login(opts: LoginOptions): Promise<void> {
  const interactive = process.stdin.isTTY === true;
  if (opts.passwordStdin && opts.email === undefined)
    throw new CliError('--email: required with --password-stdin', EXIT.usage);
  if (!interactive && !opts.passwordStdin)
    throw new CliError('no terminal to prompt for the password: pass --email and --password-stdin', EXIT.usage);
  const target = await resolveTarget(opts.url);
  const email = textFlag('--email', opts.email ?? (await prompt('Email: ')), 320).trim();
  const password = opts.passwordStdin ? await passwordFromStdin() : await promptHidden('Password: ');
  const answer = await apiClient(target.url, null).request<{ token: string; token_id: string; human: Human }>(
    'POST',
    '/api/v1/auth/login',
    { email, password, token_name: `switchboard CLI on ${hostname()}`.slice(0, 100) },
  );
  const path = await saveCredentials(target.env.configDir, { url: target.url, token: answer.token });
  // The token itself is never printed, not even with --json: it stays in the 0600 file.
  const result = { url: target.url, human: answer.human, token_id: answer.token_id, saved_to: path };
  emit(opts.json, result, (r) => `signed in to ${r.url} as ${r.human.email} (${r.human.role}); token saved to ${path}`);
}

async function logout(opts: CommonOptions): Promise<void> {
  const env = loadCliEnv();
  const saved = await loadCredentials(env.configDir);
  const url = saved ? normalizeUrl(saved.url, 'the saved login') : null;
  if (saved === null || url === null) {
    emit(opts.json, { signed_out: false, url: null }, () => 'not signed in; nothing to do');
    return;
  }
  if (opts.url !== undefined && normalizeUrl(opts.url, '--url') !== url)
    throw new CliError(`not signed in to ${normalizeUrl(opts.url, '--url')}: the saved login is for ${url}`);
  let revoked = true;
  try {
    await apiClient(url, saved.token).request('POST', '/api/v1/auth/logout');
  } catch (err) {
    // A token the server no longer accepts needs no revoking; anything else is reported
    // after the local copy is gone, so a dead server never keeps anyone signed in here.
    if (!(err instanceof ApiError && err.code === 'unauthenticated')) {
      await deleteCredentials(env.configDir);
      const reason = err instanceof Error ? err.message : String(err);
      throw new CliError(`deleted ${credentialsPath(env.configDir)}, but the token is not revoked: ${reason}`);
    }
    revoked = false;
  }
  await deleteCredentials(env.configDir);
  emit(opts.json, { signed_out: true, revoked, url }, () =>
    revoked ? `signed out of ${url}` : `signed out of ${url} (the server had already dropped the token)`,
  );
}

async function whoami(opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  const answer = await client.request<{ human: Human; token: { id: string; kind: string; name: string } | null }>(
    'GET',
    '/api/v1/whoami',
  );
  emit(opts.json, answer, (a) =>
    keyValues([
      ['server', client.url],
      ['email', a.human.email],
      ['name', a.human.display_name],
      ['role', a.human.role],
      ['human', a.human.id],
      ['token', a.token ? `${a.token.name} (${a.token.kind}, ${a.token.id})` : null],
    ]),
  );
}

async function prompt(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/** Reads a line from the terminal with echo off; Ctrl-C cancels. */
async function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(new CliError('login canceled'));
          return;
        }
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The whole of stdin, minus one trailing newline (as `echo pw |` and here-strings add). */
async function passwordFromStdin(): Promise<string> {
  let data = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) data += chunk as string;
  const password = data.replace(/\r?\n$/, '');
  if (password === '') throw new CliError('--password-stdin: stdin was empty', EXIT.usage);
  return password;
}
