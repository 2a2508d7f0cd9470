// Pins the answer schemas of sign-in, tokens, humans, presence, doorbell self-tests and the
// message queue (src/contract/people.ts, presence.ts, doorbell.ts, messages.ts;
// docs/design/api-contract.md) both ways: at compile time each use case's result, as JSON
// renders it, fits its schema; at run time each real answer is exactly what the schema
// declares (`parse` drops an undeclared field, so a field missing from either side fails).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { z } from 'zod';
import type { capacityView } from '../../src/api/message-routes.js';
import { doorbellReportOut, doorbellTestStartedOut } from '../../src/contract/doorbell.js';
import {
  capacityOut,
  entryOut,
  entryRemovedOut,
  queueClearedOut,
  queueStatusOut,
} from '../../src/contract/messages.js';
import {
  humanAuditOut,
  humanCreatedOut,
  humanDeletedOut,
  humanListOut,
  humanOneOut,
  humanOut,
  humanUpdatedOut,
  loggedOutOut,
  oidcUnlinkedOut,
  passwordChangedOut,
  resetIssuedOut,
  signedInOut,
  tokenListOut,
  tokenMintedOut,
  tokenOneOut,
  tokenOut,
  whoamiOut,
} from '../../src/contract/people.js';
import { presenceOut } from '../../src/contract/presence.js';
import { VERDICTS } from '../../src/doorbell/hints.js';
import type { reportView, startView } from '../../src/doorbell/self-test-report.js';
import { approveCliLogin, checkCliLoginRequest, type exchangeCliLoginCode } from '../../src/identity/cli-login.js';
import type { createHuman } from '../../src/identity/humans.js';
import type {
  changeOwnPassword,
  issueReset,
  listHumanAuditPage,
  unlinkHumanOidc,
  updateHuman,
} from '../../src/identity/lifecycle.js';
import type { login, logout } from '../../src/identity/login.js';
import type { ApiToken, Human, Principal } from '../../src/identity/principal.js';
import { ensureSetupLink } from '../../src/identity/setup.js';
import type { mintToken } from '../../src/identity/tokens.js';
import type { EntryView, QueueStatus } from '../../src/messages/queue.js';
import type { PresenceView } from '../../src/presence/manage.js';
import { linkHumanToOidc } from '../../src/store/oidc.js';
import { session } from '../messages/world.js';
import { apiHarness, expectStatus, PASSWORD, vend, type Reply } from './app.js';

/** A value as JSON renders it: a Date becomes its ISO string. */
type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;
type Fits<Value, Schema extends z.ZodType> = [Wire<Value>] extends [z.input<Schema>] ? true : false;
type Result<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
type Holds<T extends true> = T;

/** Each use case's result fits the schema its route declares: a renamed or retyped field fails tsc. */
export type UseCasesFitTheirSchemas = [
  Holds<Fits<Human, typeof humanOut>>,
  Holds<Fits<ApiToken, typeof tokenOut>>,
  Holds<Fits<Result<typeof login>, typeof signedInOut>>,
  Holds<Fits<Result<typeof exchangeCliLoginCode>, typeof signedInOut>>,
  Holds<Fits<Result<typeof logout>, typeof loggedOutOut>>,
  Holds<Fits<Principal, typeof whoamiOut>>,
  Holds<Fits<Result<typeof mintToken>, typeof tokenMintedOut>>,
  Holds<Fits<Result<typeof createHuman>, typeof humanCreatedOut>>,
  Holds<Fits<Result<typeof updateHuman>, typeof humanUpdatedOut>>,
  Holds<Fits<Result<typeof issueReset>, typeof resetIssuedOut>>,
  Holds<Fits<Result<typeof listHumanAuditPage>, typeof humanAuditOut>>,
  Holds<Fits<Result<typeof unlinkHumanOidc>, typeof oidcUnlinkedOut>>,
  Holds<Fits<Result<typeof changeOwnPassword>, typeof passwordChangedOut>>,
  Holds<Fits<PresenceView, typeof presenceOut>>,
  Holds<Fits<EntryView, typeof entryOut>>,
  Holds<Fits<QueueStatus, typeof queueStatusOut>>,
  Holds<Fits<ReturnType<typeof capacityView>, typeof capacityOut>>,
  Holds<Fits<ReturnType<typeof startView>, typeof doorbellTestStartedOut>>,
  Holds<Fits<ReturnType<typeof reportView>, typeof doorbellReportOut>>,
];

const h = await apiHarness('api_contract_answers');

/** The answer has the status and is exactly what the schema declares. */
function conforms(schema: z.ZodType, res: Reply, status: number, label: string): void {
  expectStatus(res, status, label);
  assert.deepEqual(schema.parse(res.body), res.body, `${label}: the answer has fields its schema does not declare`);
}

const link = await ensureSetupLink({ db: h.pool, publicUrl: 'http://switchboard.test:8080' });
assert.ok(link);
const setup = await h.post('/api/v1/setup', {
  body: { token: link.slice(link.lastIndexOf('/') + 1), email: 'admin@example.test', password: PASSWORD },
});
const signedIn = await h.post('/api/v1/auth/login', { body: { email: 'admin@example.test', password: PASSWORD } });
const admin: string = signedIn.body.token;

test('sign-in: setup, login, whoami, the CLI’s code exchange, logout', async () => {
  conforms(humanOneOut, setup, 201, 'setup');
  conforms(signedInOut, signedIn, 201, 'login');
  conforms(whoamiOut, await h.get('/api/v1/whoami', { token: admin }), 200, 'whoami');

  const verifier = 'v'.repeat(43);
  const challenge = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
    .toString('base64url')
    .slice(0, 43);
  const redirect = 'http://127.0.0.1:43110/callback';
  const request = checkCliLoginRequest({
    redirect_uri: redirect,
    state: 's',
    code_challenge_method: 'S256',
    code_challenge: challenge,
  });
  const back = new URL(await approveCliLogin(h.services.identity, setup.body.human.id, request));
  const exchanged = await h.post('/api/v1/auth/cli-token', {
    body: { code: back.searchParams.get('code'), code_verifier: verifier, redirect_uri: redirect },
  });
  conforms(signedInOut, exchanged, 201, 'cli-token');
  conforms(loggedOutOut, await h.post('/api/v1/auth/logout', { token: exchanged.body.token }), 200, 'logout');
});

test('tokens: list, mint, revoke', async () => {
  const minted = await h.post('/api/v1/tokens', { token: admin, body: { name: 'ci' } });
  conforms(tokenMintedOut, minted, 201, 'mint');
  conforms(tokenListOut, await h.get('/api/v1/tokens', { token: admin }), 200, 'list');
  conforms(tokenOneOut, await h.delete(`/api/v1/tokens/${minted.body.token.id}`, { token: admin }), 200, 'revoke');
});

test('humans: add, list, show, re-role, disable, reset, tokens, audit, unlink, delete; a password change', async () => {
  const invited = await h.post('/api/v1/humans', { token: admin, body: { email: 'invited@example.test' } });
  conforms(humanCreatedOut, invited, 201, 'add by invite');
  const added = await h.post('/api/v1/humans', {
    token: admin,
    body: { email: 'mel@example.test', password: PASSWORD, display_name: 'Mel' },
  });
  conforms(humanCreatedOut, added, 201, 'add with a password');
  const id: string = added.body.human.id;
  const mel = await h.post('/api/v1/auth/login', { body: { email: 'mel@example.test', password: PASSWORD } });
  conforms(humanListOut, await h.get('/api/v1/humans', { token: admin }), 200, 'list');
  conforms(humanOneOut, await h.get(`/api/v1/humans/${id}`, { token: admin }), 200, 'show');
  const patch = (body: unknown) => h.request('PATCH', `/api/v1/humans/${id}`, { token: admin, body });
  conforms(humanUpdatedOut, await patch({ role: 'admin' }), 200, 're-role');
  const disabled = await patch({ state: 'disabled' });
  conforms(humanUpdatedOut, disabled, 200, 'disable');
  assert.ok(disabled.body.ended, 'disabling says what it ended');
  conforms(humanUpdatedOut, await patch({ state: 'active' }), 200, 'enable');
  const reset = await h.post(`/api/v1/humans/${id}/reset`, {
    token: admin,
    body: { revoke_oauth_grants: true, rotate_endpoint_credentials: true },
  });
  conforms(resetIssuedOut, reset, 201, 'reset');
  const tokens = await h.get(`/api/v1/humans/${id}/tokens`, { token: admin });
  conforms(tokenListOut, tokens, 200, 'their tokens');
  const revoked = await h.delete(`/api/v1/humans/${id}/tokens/${mel.body.token_id}`, { token: admin });
  conforms(tokenOneOut, revoked, 200, 'revoke theirs');
  conforms(humanAuditOut, await h.get(`/api/v1/humans/${id}/audit?limit=2`, { token: admin }), 200, 'audit');
  assert.ok(await linkHumanToOidc(h.pool, id, 'https://idp.example.test', 'sub-1'));
  conforms(oidcUnlinkedOut, await h.delete(`/api/v1/humans/${id}/oidc`, { token: admin }), 200, 'unlink');

  const other = await h.post('/api/v1/humans', { token: admin, body: { email: 'o@example.test', password: PASSWORD } });
  const otto = await h.post('/api/v1/auth/login', { body: { email: 'o@example.test', password: PASSWORD } });
  const changed = await h.post('/api/v1/me/password', {
    token: otto.body.token,
    body: { current: PASSWORD, new: `${PASSWORD} again` },
  });
  conforms(passwordChangedOut, changed, 200, 'password');
  const moved = await h.request('DELETE', `/api/v1/humans/${other.body.human.id}`, {
    token: admin,
    body: { transfer_endpoints_to: id },
  });
  conforms(humanDeletedOut, moved, 200, 'delete, endpoints transferred');
  conforms(humanDeletedOut, await h.request('DELETE', `/api/v1/humans/${id}`, { token: admin }), 200, 'delete');
});

test('presence: read, override, clear, shift', async () => {
  const { endpoint } = await vend(h, { token: admin });
  const at = `/api/v1/endpoints/${endpoint.slug}`;
  conforms(presenceOut, await h.get(`${at}/presence`, { token: admin }), 200, 'read');
  const until = new Date(Date.now() + 3_600_000).toISOString();
  conforms(presenceOut, await h.put(`${at}/presence`, { token: admin, body: { presence: 'out', until } }), 200, 'set');
  conforms(presenceOut, await h.delete(`${at}/presence`, { token: admin }), 200, 'clear');
  const shift = { shift: 'Mon-Fri 09:00-17:00' };
  conforms(presenceOut, await h.put(`${at}/shift`, { token: admin, body: shift }), 200, 'shift');
});

test('doorbell self-tests: start and read; the verdicts are src/doorbell/hints.ts’s', async () => {
  assert.deepEqual(doorbellReportOut.shape.verdict.options, [...VERDICTS]);
  const { endpoint } = await vend(h, { token: admin });
  const at = `/api/v1/endpoints/${endpoint.slug}/doorbell-tests`;
  const started = await h.post(at, { token: admin, body: { wait_seconds: 10 } });
  conforms(doorbellTestStartedOut, started, 201, 'start');
  conforms(doorbellReportOut, await h.get(`${at}/${started.body.test_id}`, { token: admin }), 200, 'read');
});

test('the message queue: add, read, edit, reorder, remove, clear; the capacity setting', async () => {
  const { endpoint } = await vend(h, { token: admin });
  const base = `/api/v1/sessions/${await session(h.pool, endpoint.id)}/queue`;
  const first = await h.post(base, { token: admin, body: { content: 'one' } });
  conforms(entryOut, first, 201, 'add');
  const second = await h.post(base, { token: admin, body: { content: 'two' } });
  conforms(queueStatusOut, await h.get(base, { token: admin }), 200, 'read');
  const edited = await h.request('PATCH', `${base}/${first.body.id}`, { token: admin, body: { content: 'uno' } });
  conforms(entryOut, edited, 200, 'edit');
  const order = { entry_ids: [second.body.id, first.body.id] };
  conforms(queueStatusOut, await h.post(`${base}/reorder`, { token: admin, body: order }), 200, 'reorder');
  conforms(entryRemovedOut, await h.delete(`${base}/${first.body.id}`, { token: admin }), 200, 'remove');
  conforms(queueClearedOut, await h.delete(base, { token: admin }), 200, 'clear');
  conforms(capacityOut, await h.get('/api/v1/settings/message-queue', { token: admin }), 200, 'capacity');
  const saved = await h.request('PATCH', '/api/v1/settings/message-queue', {
    token: admin,
    body: { max_per_session: 5 },
  });
  conforms(capacityOut, saved, 200, 'save capacity');
});
