// `switchboard login --web` end to end (docs/design/cli-login.md): the compiled CLI, run as
// a child with a clean environment, listens on a loopback port and prints the board URL
// (--no-browser); Chromium, as the human, opens it, approves or denies on /cli/login, and is
// sent back to the CLI's listener. Approved, the CLI saves a token that works (`whoami`);
// denied, it exits non-zero saying so and saves nothing.

import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { chooseWay } from '../../src/cli/auth.js';
import { launchBrowser, PASSWORD, screenshot, signedInPage } from '../board/harness.js';
import { runCli, startCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { person, startOAuthServer } from '../oauth/harness.js';

const db = await testDatabase('cli_login_web');
const server = await startOAuthServer(db);
const { url } = server;
const browser = await launchBrowser();

async function configHome(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-login-web-'));
  after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const URL_LINE = /^ {2}(http:\/\/\S+\/cli\/login\?\S+)$/m;

test('approved in the browser, the CLI saves a login token that works, and the tab says it can be closed', async () => {
  const alice = await person(db, server);
  const home = await configHome();
  const env = { XDG_CONFIG_HOME: home };
  const cli = startCli(['login', '--web', '--no-browser', '--url', url, '--json', '--timeout', '2m'], env);
  const printed = (await cli.waitForStderr(URL_LINE))[1] ?? '';
  await cli.waitForStderr(/Waiting for the browser… \(Ctrl-C to cancel\)/);
  const asked = new URL(printed);
  assert.equal(asked.origin, url);
  const redirect = new URL(asked.searchParams.get('redirect_uri') ?? '');
  assert.equal(redirect.hostname, '127.0.0.1');
  assert.equal(redirect.pathname, '/callback');
  assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');

  const { page, errors } = await signedInPage(browser, url, alice);
  await page.goto(printed);
  await page.getByRole('heading', { name: 'Sign in the Switchboard CLI on this computer?', level: 1 }).waitFor();
  const text = (await page.locator('main').textContent()) ?? '';
  assert.match(text, new RegExp(`port ${redirect.port}`));
  assert.match(text, /switchboard CLI on /);
  await screenshot(page, 'cli-login');
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('heading', { name: 'Switchboard CLI signed in', level: 1 }).waitFor();
  assert.match((await page.textContent('body')) ?? '', /You can close this tab/);

  const done = await cli.done;
  assert.equal(done.code, 0, done.stderr);
  const result = JSON.parse(done.stdout) as { url: string; human: { email: string }; token_expires_at: string | null };
  assert.equal(result.url, url);
  assert.equal(result.human.email, alice.email);
  assert.ok(result.token_expires_at !== null && !Number.isNaN(Date.parse(result.token_expires_at)));
  assert.equal(done.stdout.includes('sbt_'), false, 'the token is not printed');
  const file = join(home, 'switchboard', 'credentials.json');
  assert.equal((await stat(file)).mode & 0o777, 0o600);

  const me = await runCli(['whoami', '--json'], env);
  assert.equal(me.code, 0, me.stderr);
  const whoami = JSON.parse(me.stdout) as { human: { id: string }; token: { kind: string; name: string } };
  assert.equal(whoami.human.id, alice.id);
  assert.equal(whoami.token.kind, 'human');
  assert.match(whoami.token.name, /^switchboard CLI on /);
  assert.deepEqual(errors, []);
});

test('denied in the browser (signed out at first), the CLI exits 1 saying the login was canceled, and saves nothing', async () => {
  const bob = await person(db, server);
  const home = await configHome();
  const env = { XDG_CONFIG_HOME: home };
  const tokensBefore = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens');
  const cli = startCli(['login', '--web', '--no-browser', '--url', url], env);
  const printed = (await cli.waitForStderr(URL_LINE))[1] ?? '';

  const context = await browser.newContext({ baseURL: url });
  after(() => context.close());
  const page = await context.newPage();
  await page.goto(printed);
  // Signed out: the sign-in page first, then back to the question.
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  await page.getByLabel('Email').fill(bob.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sign in the Switchboard CLI on this computer?', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Deny' }).click();
  await page.getByRole('heading', { name: 'Switchboard CLI sign-in failed', level: 1 }).waitFor();

  const done = await cli.done;
  assert.equal(done.code, 1, done.stderr);
  assert.match(done.stderr, /^switchboard: login canceled in the browser \(denied\)$/m);
  await assert.rejects(stat(join(home, 'switchboard', 'credentials.json')), { code: 'ENOENT' });
  const tokensAfter = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens');
  assert.equal(tokensAfter.rows[0]?.n, tokensBefore.rows[0]?.n);
});

test('with no answer within --timeout the CLI gives up with exit 1; bad flags exit 2', async () => {
  const env = { XDG_CONFIG_HOME: await configHome() };
  const waited = await runCli(['login', '--web', '--no-browser', '--url', url, '--timeout', '10s'], env);
  assert.equal(waited.code, 1, waited.stderr);
  assert.match(waited.stderr, /no answer from the browser within 10s/);
  const badTimeout = await runCli(['login', '--web', '--url', url, '--timeout', '3'], env);
  assert.equal(badTimeout.code, 2);
  assert.match(badTimeout.stderr, /--timeout: "3" must be a duration/);
  const both = await runCli(['login', '--web', '--email', 'a@example.test', '--url', url], env);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--web: cannot be combined/);
  // Without a terminal and without --web the password sign-in still needs its flags.
  const noTerminal = await runCli(['login', '--url', url], env);
  assert.equal(noTerminal.code, 2);
  assert.match(noTerminal.stderr, /no terminal to prompt for the password/);
});

test('the server advertises the browser sign-in in its OAuth metadata', async () => {
  const res = await fetch(`${url}/.well-known/oauth-authorization-server`);
  const metadata = (await res.json()) as Record<string, unknown>;
  assert.equal(metadata.switchboard_cli_login_endpoint, `${url}/cli/login`);
});

test('the way is chosen by flag first, then by the terminal and what the server offers', async () => {
  let asked = 0;
  const offers = (yes: boolean) => () => {
    asked += 1;
    return Promise.resolve(yes);
  };
  // A terminal and a server that offers it: the browser by default; --password keeps the prompt.
  assert.equal(await chooseWay({}, true, offers(true)), 'web');
  assert.equal(await chooseWay({ password: true }, true, offers(true)), 'password');
  assert.equal(await chooseWay({ email: 'a@example.test' }, true, offers(true)), 'password');
  // A server that does not offer it (older, or unreadable) keeps the prompt.
  assert.equal(await chooseWay({}, true, offers(false)), 'password');
  // No terminal: the password flags, unless --web is asked for outright.
  assert.equal(await chooseWay({ passwordStdin: true, email: 'a@example.test' }, false, offers(true)), 'password');
  assert.equal(await chooseWay({}, false, offers(true)), 'password');
  assert.equal(await chooseWay({ web: true }, false, offers(false)), 'web');
  assert.equal(asked, 2, 'the server is asked only when the flags and the terminal leave it open');
  await assert.rejects(chooseWay({ web: true, passwordStdin: true }, false, offers(true)), /--web: cannot be combined/);
});
