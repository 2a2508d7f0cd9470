// `switchboard login --web` (docs/design/cli-login.md): sign in through the browser, as
// `gh auth login` does. A loopback listener on 127.0.0.1 and a port the system picks
// (RFC 8252 §7.3), a random state and a PKCE S256 pair; the browser opens the board's
// /cli/login, where the signed-in human approves; the board sends the browser back to the
// listener with a one-time code, which the CLI spends with its verifier at
// POST /api/v1/auth/cli-token. Progress goes to stderr so stdout stays clean for --json.

import { spawn } from 'node:child_process';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { platform } from 'node:process';
import { formatDuration, parseDuration } from '../config/duration.js';
import { CliError, EXIT } from './exit.js';

/** Bounds of --timeout: long enough to sign in on the board first, short enough that a forgotten run ends. */
const MIN_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 3_600_000;

/** --timeout as milliseconds, 10s–1h. */
export function loginTimeoutMs(text: string): number {
  const ms = parseDuration(text);
  if (ms === null || ms < MIN_TIMEOUT_MS || ms > MAX_TIMEOUT_MS)
    throw new CliError(`--timeout: "${text}" must be a duration from 10s to 1h, e.g. 5m`, EXIT.usage);
  return ms;
}

/** What the browser brought back to the listener. */
export type BrowserAnswer = { code: string } | { denied: string };

export interface WebLogin {
  /** The page the browser opens. */
  url: string;
  /** The listener's callback, which the code is bound to. */
  redirectUri: string;
  verifier: string;
  /** Resolves with the browser's answer; rejects on timeout. Always closes the listener. */
  answer: Promise<BrowserAnswer>;
  /** Tells the waiting browser tab how it ended, then closes the listener. */
  finish(ok: boolean, message: string): void;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The tab's last page; its icon is inline, as the listener is gone by the time a browser would ask for one. */
function closePage(ok: boolean, message: string): string {
  const title = ok ? 'Switchboard CLI signed in' : 'Switchboard CLI sign-in failed';
  const escaped = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title></head>
<body><h1>${title}</h1><p>${escaped}</p><p>You can close this tab.</p></body></html>`;
}

/**
 * Starts the listener and builds the URL to open. The first request to /callback that
 * carries this run's state ends the wait; any other request is answered 400 and ignored,
 * so another page on this machine poking the port cannot end or steer it.
 */
export async function startWebLogin(server: string, tokenName: string, timeoutMs: number): Promise<WebLogin> {
  const state = randomBytes(24).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  let pending: ServerResponse | null = null;
  let settle: ((a: BrowserAnswer) => void) | null = null;
  let fail: ((e: Error) => void) | null = null;
  const answer = new Promise<BrowserAnswer>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });

  const listener: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const params = url.searchParams;
    if (req.method !== 'GET' || url.pathname !== '/callback' || !sameText(params.get('state') ?? '', state)) {
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end('not the sign-in this switchboard login is waiting for\n');
      return;
    }
    if (pending !== null || settle === null) {
      res.writeHead(409, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end('this sign-in has already been answered\n');
      return;
    }
    const error = params.get('error');
    const code = params.get('code');
    const resolve = settle;
    settle = null;
    pending = res;
    resolve(error !== null ? { denied: error } : code ? { code } : { denied: 'no code in the answer' });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (listener.address() as AddressInfo).port;
  const redirectUri = `http://127.0.0.1:${port}/callback`;

  const close = () => {
    listener.close();
    listener.closeAllConnections();
  };
  const timer = setTimeout(() => {
    settle = null;
    close();
    fail?.(
      new CliError(`no answer from the browser within ${formatDuration(timeoutMs)}: run \`switchboard login\` again`),
    );
  }, timeoutMs);
  void answer.then(
    () => clearTimeout(timer),
    () => clearTimeout(timer),
  );

  const query = new URLSearchParams({
    redirect_uri: redirectUri,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    token_name: tokenName,
  });
  return {
    url: `${server}/cli/login?${query.toString()}`,
    redirectUri,
    verifier,
    answer,
    finish(ok, message) {
      const res = pending;
      if (res) {
        res.writeHead(ok ? 200 : 400, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
        res.end(closePage(ok, message), close);
      } else close();
    },
  };
}

/**
 * Opens `url` in the default browser (xdg-open, open, or start); false when that cannot
 * run or says it failed, so the caller prints the URL for the human to open.
 */
export async function openBrowser(url: string): Promise<boolean> {
  const [command, args] =
    platform === 'darwin'
      ? ['open', [url]]
      : platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('exit', (code) => resolve(code === 0));
      child.unref();
      // Some openers stay until the browser they started exits: still running is opened.
      setTimeout(() => resolve(true), 3000).unref();
    } catch {
      resolve(false);
    }
  });
}
