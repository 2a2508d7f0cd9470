// The harness for the board's browser tests: a real HTTP server on 127.0.0.1:0 with the
// LISTEN/NOTIFY bus, humans with passwords, one Chromium per test file (Debian's, driven
// by playwright-core) and a fresh context per test, signed in through the real form.

import { mkdir } from 'node:fs/promises';
import { after } from 'node:test';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { NotifyBus } from '../../src/db/bus.js';
import { createHuman } from '../../src/identity/humans.js';
import type { Keyring } from '../../src/secrets/keyring.js';
import { startApp } from '../mcp/harness.js';
import type { TestDatabase } from '../helpers/db.js';

export const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = new URL('../../test-output/board/', import.meta.url).pathname;
export const PASSWORD = 'correct horse battery';

/** The server under test, by default with a fast board poll so a claim shows quickly (and a keyring when given). */
export async function startBoard(
  db: TestDatabase,
  boardPollMs = 250,
  env: Record<string, string> = {},
  extra: { keyring?: Keyring } = {},
): Promise<{ url: string }> {
  const bus = new NotifyBus({ url: db.url });
  await bus.start();
  after(() => bus.stop());
  const { url } = await startApp(db.pool, 'board-test', bus, {
    env: { SWITCHBOARD_BOARD_POLL: `${boardPollMs}ms`, SWITCHBOARD_RETENTION: '30d', ...env },
    ...extra,
  });
  return { url };
}

let humans = 0;
export async function human(db: TestDatabase, role: 'admin' | 'member' = 'member') {
  humans += 1;
  const email = `person${humans}-${Date.now()}@example.test`;
  const { human } = await createHuman(
    { db: db.pool, publicUrl: 'http://switchboard.test' },
    { email, password: PASSWORD, role },
  );
  return { id: human.id, email };
}

/** One headless Chromium for the whole file; closed when the file ends. */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // launch() gives every run a fresh temporary profile (its own --user-data-dir).
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  after(() => browser.close());
  return browser;
}

/** A new context signed in as this human through the sign-in form. */
export async function signedInPage(
  browser: Browser,
  url: string,
  who: { email: string },
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ ...options, baseURL: url });
  after(() => context.close());
  const page = await context.newPage();
  // Console errors and uncaught exceptions, a CSP refusal among them.
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto('/login');
  if (options.colorScheme === undefined && options.javaScriptEnabled !== false) await screenshot(page, 'login');
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${url}/`);
  await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  return { context, page, errors };
}

/** Saves a full-page screenshot under test-output/board/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}${name}.png`, fullPage: true });
}

/** Waits until the live stream of this page is connected (JS pages only). */
export async function liveOpen(page: Page): Promise<void> {
  await page.waitForFunction(() => document.documentElement.getAttribute('data-live-open') === 'true');
}

/**
 * A request to the board at `url` as a signed-in browser without JavaScript would send it:
 * the session cookie, a form body when given, redirects not followed.
 */
export async function boardRequest(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  cookie: string,
  form?: Record<string, string>,
): Promise<{ status: number; location: string | null; text: string }> {
  const res = await fetch(url + path, {
    method,
    headers: { cookie, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}
