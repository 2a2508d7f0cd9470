// The OIDC settings (docs/design/oauth.md, "Human sign-in through OIDC"): all or nothing,
// someone must be allowed, password sign-in can be turned off only beside OIDC, and each
// problem names its variable. And who the allow-lists let in.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/index.js';
import { emailAllowed } from '../../src/oidc/signin.js';

const OIDC = {
  SWITCHBOARD_OIDC_ISSUER: 'https://login.example.com',
  SWITCHBOARD_OIDC_CLIENT_ID: 'switchboard',
  SWITCHBOARD_OIDC_ALLOWED_DOMAINS: 'Example.com, example.org',
};

function problems(env: Record<string, string>): string {
  const result = parseConfig(env);
  assert.ok(!result.ok, 'refused');
  return result.problems.join('\n');
}

test('off by default: no OIDC, password sign-in on', () => {
  const result = parseConfig({});
  assert.ok(result.ok);
  assert.equal(result.config.oidc, null);
  assert.equal(result.config.passwordSignIn, true);
});

test('configured: lists lower-cased, a public client without a secret, the button says "your organisation"', () => {
  const result = parseConfig({ ...OIDC, SWITCHBOARD_OIDC_ALLOWED_EMAILS: 'Ada@Partner.test' });
  assert.ok(result.ok, result.ok ? '' : result.problems.join('; '));
  assert.deepEqual(result.config.oidc, {
    issuer: 'https://login.example.com',
    clientId: 'switchboard',
    clientSecret: null,
    providerName: 'your organisation',
    allowedDomains: ['example.com', 'example.org'],
    allowedEmails: ['ada@partner.test'],
  });
  const named = parseConfig({
    ...OIDC,
    SWITCHBOARD_OIDC_CLIENT_SECRET: 's3cret',
    SWITCHBOARD_OIDC_PROVIDER_NAME: 'Okta',
  });
  assert.ok(named.ok);
  assert.equal(named.config.oidc?.clientSecret, 's3cret');
  assert.equal(named.config.oidc?.providerName, 'Okta');
});

test('the issuer is https, or http on a loopback host only', () => {
  assert.match(
    problems({ ...OIDC, SWITCHBOARD_OIDC_ISSUER: 'http://login.example.com' }),
    /^SWITCHBOARD_OIDC_ISSUER: must be an https URL/m,
  );
  assert.match(problems({ ...OIDC, SWITCHBOARD_OIDC_ISSUER: 'not a url' }), /^SWITCHBOARD_OIDC_ISSUER:/m);
  for (const issuer of ['http://127.0.0.1:9000', 'http://localhost:9000', 'http://[::1]:9000']) {
    assert.ok(parseConfig({ ...OIDC, SWITCHBOARD_OIDC_ISSUER: issuer }).ok, issuer);
  }
});

test('all or nothing: a client id with the issuer, no OIDC variable without it', () => {
  assert.match(
    problems({
      SWITCHBOARD_OIDC_ISSUER: OIDC.SWITCHBOARD_OIDC_ISSUER,
      SWITCHBOARD_OIDC_ALLOWED_DOMAINS: 'example.com',
    }),
    /^SWITCHBOARD_OIDC_CLIENT_ID: required with SWITCHBOARD_OIDC_ISSUER/m,
  );
  const stray = problems({ SWITCHBOARD_OIDC_CLIENT_ID: 'x', SWITCHBOARD_OIDC_ALLOWED_EMAILS: 'a@example.com' });
  assert.match(stray, /^SWITCHBOARD_OIDC_CLIENT_ID: set without SWITCHBOARD_OIDC_ISSUER/m);
  assert.match(stray, /^SWITCHBOARD_OIDC_ALLOWED_EMAILS: set without SWITCHBOARD_OIDC_ISSUER/m);
});

test('someone must be allowed: a domain or an e-mail, each checked for shape', () => {
  assert.match(
    problems({ ...OIDC, SWITCHBOARD_OIDC_ALLOWED_DOMAINS: '' }),
    /^SWITCHBOARD_OIDC_ALLOWED_DOMAINS: set it or SWITCHBOARD_OIDC_ALLOWED_EMAILS/m,
  );
  assert.ok(
    parseConfig({ ...OIDC, SWITCHBOARD_OIDC_ALLOWED_DOMAINS: '', SWITCHBOARD_OIDC_ALLOWED_EMAILS: 'a@b.test' }).ok,
  );
  assert.match(
    problems({ ...OIDC, SWITCHBOARD_OIDC_ALLOWED_DOMAINS: 'example.com,@example.org' }),
    /^SWITCHBOARD_OIDC_ALLOWED_DOMAINS: "@example.org" is not an e-mail domain/m,
  );
  assert.match(
    problems({ ...OIDC, SWITCHBOARD_OIDC_ALLOWED_EMAILS: 'ada' }),
    /^SWITCHBOARD_OIDC_ALLOWED_EMAILS: "ada" is not an e-mail address/m,
  );
});

test('SWITCHBOARD_PASSWORD_SIGNIN=off is refused without OIDC (it would lock everyone out), taken with it', () => {
  assert.match(
    problems({ SWITCHBOARD_PASSWORD_SIGNIN: 'off' }),
    /^SWITCHBOARD_PASSWORD_SIGNIN: "off" is refused without SWITCHBOARD_OIDC_ISSUER/m,
  );
  const off = parseConfig({ ...OIDC, SWITCHBOARD_PASSWORD_SIGNIN: 'off' });
  assert.ok(off.ok);
  assert.equal(off.config.passwordSignIn, false);
  assert.match(problems({ SWITCHBOARD_PASSWORD_SIGNIN: 'no' }), /^SWITCHBOARD_PASSWORD_SIGNIN:/m);
});

test('the allow-lists: an exact domain (no subdomain, no look-alike) or a listed address, any case', () => {
  const allow = { allowedDomains: ['example.com'], allowedEmails: ['ada@partner.test'] };
  assert.equal(emailAllowed('Bob@Example.COM', allow), true);
  assert.equal(emailAllowed('ADA@partner.test', allow), true);
  assert.equal(emailAllowed('eve@partner.test', allow), false);
  assert.equal(emailAllowed('eve@sub.example.com', allow), false);
  assert.equal(emailAllowed('eve@notexample.com', allow), false);
  assert.equal(emailAllowed('eve@example.com.evil.test', allow), false);
  assert.equal(emailAllowed('example.com', allow), false);
  assert.equal(emailAllowed('"a@example.com"@evil.test', allow), false);
});
