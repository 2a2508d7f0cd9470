// What the browser sign-in of the CLI refuses (docs/design/cli-login.md): at the board page,
// a redirect URI that is not the CLI's loopback listener and a request without S256; at
// POST /api/v1/auth/cli-token, a replayed code, a wrong verifier, a wrong redirect_uri, an
// expired code and a code of a human disabled since approving — each named by its field,
// and none adds a token row. The approved path and Deny are pinned here too, without a
// browser (test/cli/login-web.test.ts drives both through Chromium and the compiled CLI).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import { person, pkce, startOAuthServer } from '../oauth/harness.js';

const db = await testDatabase('api_cli_token');
// The sign-in throttle is pinned below on a server of its own; here it must not get in the way.
const server = await startOAuthServer(db, { SWITCHBOARD_SIGNIN_BURST: '1000' });
const { url } = server;
const alice = await person(db, server);
const REDIRECT = 'http://127.0.0.1:43110/callback';

async function tokenRows(): Promise<number> {
  const res = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens');
  return res.rows[0]?.n ?? 0;
}

type Who = { cookie: string; csrf: string };

function params(challenge: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    redirect_uri: REDIRECT,
    state: 'st-cli',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    token_name: 'switchboard CLI on testbox',
    ...extra,
  };
}

/** The board page, as the signed-in browser GETs it (redirects not followed). */
async function ask(who: Who, query: Record<string, string>) {
  const res = await fetch(`${url}/cli/login?${new URLSearchParams(query).toString()}`, {
    headers: { cookie: who.cookie },
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text(), headers: res.headers };
}

/** The board form's answer. */
async function answer(who: Who, form: Record<string, string>, decision: 'approve' | 'deny') {
  const res = await fetch(`${url}/cli/login`, {
    method: 'POST',
    headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...form, csrf: who.csrf, decision }).toString(),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

/** Approves on the board and returns the code the loopback listener would get. */
async function approvedCode(who: Who, challenge: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await answer(who, params(challenge, extra), 'approve');
  assert.equal(res.status, 303, res.text);
  const back = new URL(res.location ?? '');
  assert.equal(`${back.origin}${back.pathname}`, extra.redirect_uri ?? REDIRECT);
  assert.equal(back.searchParams.get('state'), 'st-cli');
  const code = back.searchParams.get('code');
  assert.match(code ?? '', /^sbl_[A-Za-z0-9_-]{43}$/);
  return code ?? '';
}

async function exchange(body: Record<string, unknown>) {
  const res = await fetch(`${url}/api/v1/auth/cli-token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function refusedFor(res: Awaited<ReturnType<typeof exchange>>, status: number, field: string, words: RegExp) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error?.details?.field, field, res.text);
  assert.match(res.body.error?.message ?? '', words);
}

test('the page asks by name for the port and the token name; Approve buys one login token that acts as the human', async () => {
  const { verifier, challenge } = pkce();
  const page = await ask(alice, params(challenge));
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, /Sign in the Switchboard CLI on this computer\?/);
  assert.match(page.text, /port <strong>43110<\/strong>/);
  assert.match(page.text, /switchboard CLI on testbox/);
  // The form may go on to the loopback origin, and nowhere else new.
  assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self' http:\/\/127\.0\.0\.1:43110;/);

  const code = await approvedCode(alice, challenge);
  const stored = await db.pool.query<{ hash: Buffer; human_id: string; expires_in: number }>(
    `SELECT hash, human_id, extract(epoch FROM expires_at - now())::float8 AS expires_in FROM cli_login_codes`,
  );
  assert.equal(stored.rows.length, 1);
  assert.ok(stored.rows[0]?.hash.equals(createHash('sha256').update(code).digest()), 'stored by its hash alone');
  assert.equal(stored.rows[0]?.human_id, alice.id);
  assert.ok((stored.rows[0]?.expires_in ?? 0) <= 60 && (stored.rows[0]?.expires_in ?? 0) > 30);

  const before = await tokenRows();
  const res = await exchange({ code, code_verifier: verifier, redirect_uri: REDIRECT });
  assert.equal(res.status, 201, res.text);
  assert.match(res.body.token, /^sbt_/);
  assert.equal(res.body.human.email, alice.email);
  assert.equal(await tokenRows(), before + 1);
  const row = await db.pool.query<{ kind: string; name: string; human_id: string }>(
    'SELECT kind, name, human_id FROM api_tokens WHERE id = $1',
    [res.body.token_id],
  );
  assert.deepEqual(row.rows[0], { kind: 'human', name: 'switchboard CLI on testbox', human_id: alice.id });
  const me = await fetch(`${url}/api/v1/whoami`, { headers: { authorization: `Bearer ${res.body.token}` } });
  assert.equal(((await me.json()) as { human: { id: string } }).human.id, alice.id);
});

test('Deny sends the browser back with error=access_denied and the state, and makes no code', async () => {
  const { challenge } = pkce();
  const res = await answer(alice, params(challenge), 'deny');
  assert.equal(res.status, 303);
  const back = new URL(res.location ?? '');
  assert.equal(back.searchParams.get('error'), 'access_denied');
  assert.equal(back.searchParams.get('state'), 'st-cli');
  assert.equal(back.searchParams.get('code'), null);
  const codes = await db.pool.query('SELECT 1 FROM cli_login_codes WHERE human_id = $1 AND used_at IS NULL', [
    alice.id,
  ]);
  assert.equal(codes.rowCount, 0);
});

test('the page refuses a redirect URI that is not the loopback /callback, and a request without S256, making no code', async () => {
  const { challenge } = pkce();
  const codesBefore = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM cli_login_codes');
  for (const redirect of [
    'http://evil.example/callback',
    'https://127.0.0.1:4000/callback',
    'http://127.0.0.1:4000/elsewhere',
    'http://127.0.0.1/callback',
    'http://127.0.0.1.evil.example:4000/callback',
  ]) {
    const page = await ask(alice, params(challenge, { redirect_uri: redirect }));
    assert.equal(page.status, 400, redirect);
    assert.match(page.text, /redirect_uri: must/, redirect);
    assert.equal(page.location, null, 'never sent anywhere');
    const posted = await answer(alice, params(challenge, { redirect_uri: redirect }), 'approve');
    assert.equal(posted.status, 400, redirect);
    assert.equal(posted.location, null);
  }
  for (const ok of ['http://[::1]:5000/callback', 'http://localhost:5001/callback']) {
    const page = await ask(alice, params(challenge, { redirect_uri: ok }));
    assert.equal(page.status, 200, `${ok}: ${page.text}`);
  }
  const plain = await ask(alice, params(challenge, { code_challenge_method: 'plain' }));
  assert.equal(plain.status, 400);
  assert.match(plain.text, /code_challenge_method: must be S256/);
  const codesAfter = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM cli_login_codes');
  assert.equal(codesAfter.rows[0]?.n, codesBefore.rows[0]?.n);
});

test('signed out, the page sends the browser to sign in and come back; a form without the CSRF token is refused', async () => {
  const { challenge } = pkce();
  const query = new URLSearchParams(params(challenge)).toString();
  const res = await fetch(`${url}/cli/login?${query}`, { redirect: 'manual' });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), `/login?next=${encodeURIComponent(`/cli/login?${query}`)}`);
  const forged = await answer({ cookie: alice.cookie, csrf: 'not-the-token' }, params(challenge), 'approve');
  assert.equal(forged.status, 403);
  assert.equal(forged.location, null);
});

test('a replayed code is refused naming code, and issues nothing', async () => {
  const { verifier, challenge } = pkce();
  const code = await approvedCode(alice, challenge);
  const first = await exchange({ code, code_verifier: verifier, redirect_uri: REDIRECT });
  assert.equal(first.status, 201, first.text);
  const before = await tokenRows();
  refusedFor(await exchange({ code, code_verifier: verifier, redirect_uri: REDIRECT }), 400, 'code', /already used/);
  assert.equal(await tokenRows(), before);
});

test('a wrong verifier is refused naming code_verifier, and spends the code so it cannot be tried again', async () => {
  const { verifier, challenge } = pkce();
  const code = await approvedCode(alice, challenge);
  const before = await tokenRows();
  refusedFor(
    await exchange({ code, code_verifier: pkce().verifier, redirect_uri: REDIRECT }),
    400,
    'code_verifier',
    /does not match the code_challenge/,
  );
  refusedFor(await exchange({ code, code_verifier: verifier, redirect_uri: REDIRECT }), 400, 'code', /already used/);
  assert.equal(await tokenRows(), before);
});

test('a redirect_uri other than the one approved is refused naming redirect_uri', async () => {
  const { verifier, challenge } = pkce();
  const code = await approvedCode(alice, challenge);
  const before = await tokenRows();
  refusedFor(
    await exchange({ code, code_verifier: verifier, redirect_uri: 'http://127.0.0.1:43111/callback' }),
    400,
    'redirect_uri',
    /not the one the code was issued for/,
  );
  assert.equal(await tokenRows(), before);
});

test('an expired code is refused naming code', async () => {
  const { verifier, challenge } = pkce();
  const code = await approvedCode(alice, challenge);
  await db.pool.query(`UPDATE cli_login_codes SET expires_at = now() - interval '1 second' WHERE hash = $1`, [
    createHash('sha256').update(code).digest(),
  ]);
  const before = await tokenRows();
  refusedFor(await exchange({ code, code_verifier: verifier, redirect_uri: REDIRECT }), 400, 'code', /expired/);
  assert.equal(await tokenRows(), before);
});

test('an unknown or malformed code, and a missing field, are refused by name', async () => {
  const { verifier } = pkce();
  const before = await tokenRows();
  refusedFor(
    await exchange({ code: `sbl_${'A'.repeat(43)}`, code_verifier: verifier, redirect_uri: REDIRECT }),
    400,
    'code',
    /unknown/,
  );
  refusedFor(await exchange({ code: 'nope', code_verifier: verifier, redirect_uri: REDIRECT }), 400, 'code', /unknown/);
  refusedFor(await exchange({ code: `sbl_${'A'.repeat(43)}`, redirect_uri: REDIRECT }), 400, 'code_verifier', /./);
  assert.equal(await tokenRows(), before);
});

test('a code of a human disabled after approving is refused naming code, and issues nothing', async () => {
  const bob = await person(db, server);
  const { verifier, challenge } = pkce();
  const code = await approvedCode(bob, challenge);
  await db.pool.query(`UPDATE humans SET state = 'disabled' WHERE id = $1`, [bob.id]);
  const before = await tokenRows();
  refusedFor(await exchange({ code, code_verifier: verifier, redirect_uri: REDIRECT }), 403, 'code', /disabled/);
  assert.equal(await tokenRows(), before);
});

test('the exchange spends the sign-in throttle of the caller’s address, as a password sign-in does', async () => {
  const strict = await startOAuthServer(db, { SWITCHBOARD_SIGNIN_BURST: '2', SWITCHBOARD_SIGNIN_PER_MINUTE: '1' });
  const attempt = () =>
    fetch(`${strict.url}/api/v1/auth/cli-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: `sbl_${'B'.repeat(43)}`, code_verifier: pkce().verifier, redirect_uri: REDIRECT }),
    });
  assert.equal((await attempt()).status, 400);
  assert.equal((await attempt()).status, 400);
  const limited = await attempt();
  assert.equal(limited.status, 429);
  assert.match(limited.headers.get('ratelimit-policy') ?? '', /signin/);
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
});
