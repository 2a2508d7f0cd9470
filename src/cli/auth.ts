// `switchboard login`, `logout` and `whoami`: exchanging an email and password, or an
// approval in the browser (login-web.ts, docs/design/cli-login.md), for an API token
// saved 0600 (credentials.ts; it expires after SWITCHBOARD_TOKEN_TTL unused),
// revoking it, and saying who the token acts as and until when.
// Prompts go to stderr so stdout stays clean for --json. Does not create humans (that
// is the setup URL or an admin's `POST /api/v1/humans`).

import { hostname } from 'node:os';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
// What a sign-in brings back, whichever way it went: SignedIn.
import type { SignedIn as Issued, WhoAmI } from '../client/index.js';
import { loadCliEnv } from '../config/cli.js';
import { ApiError, apiClient, normalizeUrl, resolveTarget, signedInClient } from './client.js';
import { credentialsPath, deleteCredentials, loadCredentials, saveCredentials } from './credentials.js';
import { CliError, EXIT } from './exit.js';
import { apiCommand, run, textFlag, type CommonOptions } from './flags.js';
import { startWebLogin, loginTimeoutMs, openBrowser } from './login-web.js';
import { clean, emit, keyValues } from './output.js';

interface LoginOptions extends CommonOptions {
  email?: string;
  passwordStdin?: boolean;
  web?: boolean;
  password?: boolean;
  browser: boolean;
  timeout: string;
}

export function registerAuth(program: Command): void {
  apiCommand(program, 'login', 'sign in and save an API token for the other commands (file mode 0600)')
    .option('--web', 'sign in through the browser (the default on a terminal when the server offers it)')
    .option('--password', 'sign in with email and password even where the browser sign-in is offered')
    .option('--no-browser', 'with the browser sign-in: print the URL to open instead of opening it')
    .option('--timeout <DURATION>', 'with the browser sign-in: how long to wait for it, 10s–1h', '5m')
    .option('--email <EMAIL>', 'your email (prompted for on a terminal)')
    .option('--password-stdin', 'read the password from stdin instead of prompting (for scripts)')
    .action(run(login));
  apiCommand(program, 'logout', 'revoke the saved token and delete it').action(run(logout));
  apiCommand(program, 'whoami', 'show who the saved token signs in as').action(run(whoami));
}

/**
 * Which way to sign in (docs/design/cli-login.md, "Choosing the way"): --web or --password
 * when given; the password with --email or --password-stdin; else the browser when there is
 * a terminal and the server offers it (`offered` is asked only then); else the password
 * prompt (which needs a terminal too).
 */
export async function chooseWay(
  opts: Pick<LoginOptions, 'web' | 'password' | 'email' | 'passwordStdin'>,
  interactive: boolean,
  offered: () => Promise<boolean>,
): Promise<'web' | 'password'> {
  const passwordFlags = opts.password === true || opts.email !== undefined || opts.passwordStdin === true;
  if (opts.web && passwordFlags)
    throw new CliError('--web: cannot be combined with --password, --email or --password-stdin', EXIT.usage);
  if (opts.web) return 'web';
  if (passwordFlags || !interactive) return 'password';
  return (await offered()) ? 'web' : 'password';
}

/** Whether the server advertises the browser sign-in; a server that cannot say does not. */
async function offersWebLogin(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return false;
    const metadata = (await res.json()) as { switchboard_cli_login_endpoint?: unknown };
    return typeof metadata.switchboard_cli_login_endpoint === 'string';
  } catch {
    return false;
  }
}

async function login(opts: LoginOptions): Promise<void> {
  const interactive = process.stdin.isTTY === true;
  if (opts.passwordStdin && opts.email === undefined)
    throw new CliError('--email: required with --password-stdin', EXIT.usage);
  const timeoutMs = loginTimeoutMs(opts.timeout);
  const target = await resolveTarget(opts.url);
  const tokenName = `switchboard CLI on ${hostname()}`.slice(0, 100);
  const web = (await chooseWay(opts, interactive, () => offersWebLogin(target.url))) === 'web';
  if (!web && !interactive && !opts.passwordStdin)
    throw new CliError(
      'no terminal to prompt for the password: pass --email and --password-stdin, or --web',
      EXIT.usage,
    );
  const answer = web
    ? await webLogin(target.url, tokenName, opts.browser, timeoutMs)
    : await passwordLogin(target.url, tokenName, opts);
  const path = await saveCredentials(target.env.configDir, { url: target.url, token: answer.token });
  // The token itself is never printed, not even with --json: it stays in the 0600 file.
  const result = {
    url: target.url,
    human: answer.human,
    token_id: answer.token_id,
    token_expires_at: answer.expires_at,
    // The same instant under the name it had before the browser sign-in, for older scripts.
    expires_at: answer.expires_at,
    saved_to: path,
  };
  emit(
    opts.json,
    result,
    (r) =>
      `signed in to ${r.url} as ${r.human.email} (${r.human.role}); token saved to ${path}` +
      (r.token_expires_at ? `\nthe token expires ${r.token_expires_at} unless used before (each use extends it)` : ''),
  );
}

async function passwordLogin(url: string, tokenName: string, opts: LoginOptions): Promise<Issued> {
  const email = textFlag('--email', opts.email ?? (await prompt('Email: ')), 320).trim();
  const password = opts.passwordStdin ? await passwordFromStdin() : await promptHidden('Password: ');
  return apiClient(url, null).request<Issued>('POST', '/api/v1/auth/login', { email, password, token_name: tokenName });
}

/** The browser sign-in: open (or print) the board's page, wait for the answer, spend the code. */
async function webLogin(url: string, tokenName: string, openIt: boolean, timeoutMs: number): Promise<Issued> {
  const flow = await startWebLogin(url, tokenName, timeoutMs);
  const opened = openIt && (await openBrowser(flow.url));
  process.stderr.write(
    opened
      ? `Opened the browser to sign in. If it did not open, visit:\n  ${flow.url}\n`
      : `Open this URL in a browser on this computer to sign in:\n  ${flow.url}\n`,
  );
  process.stderr.write('Waiting for the browser… (Ctrl-C to cancel)\n');
  const answer = await flow.answer;
  if ('denied' in answer) {
    const reason = answer.denied === 'access_denied' ? 'denied' : answer.denied;
    flow.finish(false, 'The sign-in was canceled; the CLI got no token.');
    throw new CliError(`login canceled in the browser (${clean(reason)})`);
  }
  try {
    const issued = await apiClient(url, null).request<Issued>('POST', '/api/v1/auth/cli-token', {
      code: answer.code,
      code_verifier: flow.verifier,
      redirect_uri: flow.redirectUri,
      token_name: tokenName,
    });
    flow.finish(true, `The Switchboard CLI is signed in as ${issued.human.email}. Return to the terminal.`);
    return issued;
  } catch (err) {
    flow.finish(false, 'The CLI could not finish signing in: see the terminal.');
    throw err;
  }
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
  const answer = await client.request<WhoAmI>('GET', '/api/v1/whoami');
  emit(opts.json, answer, (a) =>
    keyValues([
      ['server', client.url],
      ['email', a.human.email],
      ['name', a.human.display_name],
      ['role', a.human.role],
      ['human', a.human.id],
      ['token', a.token ? `${a.token.name} (${a.token.kind}, ${a.token.id})` : null],
      ['expires', a.token ? expiryText(a.token) : null],
    ]),
  );
}

/** When the token stops working: a login token's expiry moves out on every use. */
function expiryText(token: { kind: string; expires_at: string | null }): string {
  if (token.expires_at === null) return 'never';
  if (token.kind === 'human') return `${token.expires_at} unless used before (each use extends it)`;
  return token.expires_at;
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
