// The OIDC tests' harness: a real, certified OpenID provider (the `oidc-provider` package)
// on 127.0.0.1 with a random port, its dev login and consent pages, one confidential
// client registered for the Switchboard callback, and an in-memory account store whose
// accounts the tests add (login name → claims); and a Switchboard on a port chosen first,
// so its public URL — which the redirect URI is built from — is the URL the browser uses.

import { createServer } from 'node:http';
import { after } from 'node:test';
import Provider from 'oidc-provider';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { NotifyBus } from '../../src/db/bus.js';
import type { Services } from '../../src/services.js';
import type { TestDatabase } from '../helpers/db.js';
import { testApp, testServices } from '../helpers/services.js';
import { freePort } from '../oauth/harness.js';

export const CLIENT_ID = 'switchboard-test';
export const CLIENT_SECRET = 'a-client-secret-of-the-test-provider';

export interface AccountClaims {
  email: string;
  /** A boolean as the standard says, or a string as some providers send it. */
  email_verified: boolean | string;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  /** Adds an account: the dev login page signs in whoever types this login name. */
  account(login: string, claims: AccountClaims): void;
}

/** A provider whose one client may come back to these redirect URIs. */
export async function startProvider(redirectUris: string[]): Promise<TestProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = new Map<string, AccountClaims>();
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    async findAccount(_ctx, id) {
      const claims = accounts.get(id);
      if (!claims) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
  });
  provider.on('server_error', (...args: unknown[]) => console.error('oidc-provider', ...args));
  const server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { issuer, account: (login, claims) => accounts.set(login, claims) };
}

export interface OidcSwitchboard {
  url: string;
  services: Services;
  /** Every line the server logged, parsed: the refusals' precise reasons are here. */
  logs: Array<Record<string, unknown>>;
}

/** A Switchboard on `port` (from freePort) signing in through `issuer`. */
export async function startSwitchboard(
  db: TestDatabase,
  port: number,
  issuer: string,
  env: Record<string, string> = {},
): Promise<OidcSwitchboard> {
  const bus = new NotifyBus({ url: db.url });
  await bus.start();
  after(() => bus.stop());
  const url = `http://127.0.0.1:${port}`;
  const logs: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const services = await testServices({
    log,
    pool: db.pool,
    instanceId: `oidc-test-${port}`,
    bus,
    env: {
      SWITCHBOARD_PUBLIC_URL: url,
      SWITCHBOARD_OIDC_ISSUER: issuer,
      SWITCHBOARD_OIDC_CLIENT_ID: CLIENT_ID,
      SWITCHBOARD_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      SWITCHBOARD_OIDC_PROVIDER_NAME: 'Example SSO',
      SWITCHBOARD_OIDC_ALLOWED_DOMAINS: 'example.test',
      // Every callback counts toward the sign-in limit of 127.0.0.1; the file signs in often.
      SWITCHBOARD_SIGNIN_BURST: '100',
      ...env,
    },
  });
  const app = testApp(services);
  await app.listen({ host: '127.0.0.1', port });
  after(() => app.close());
  return { url, services, logs };
}

/**
 * From the board's sign-in page through the provider's dev login and consent pages, as
 * `login`; stops when the browser is back on the board (wherever the board sent it).
 */
export async function signInThroughProvider(page: Page, board: string, login: string): Promise<void> {
  await page.goto(`${board}/login`);
  await page.getByRole('link', { name: 'Sign in with Example SSO' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password: the dev login takes any');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((u) => u.href.startsWith(board));
}
