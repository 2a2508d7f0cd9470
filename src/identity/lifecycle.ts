// The human lifecycle as admins run it (docs/design/people.md): disable and enable, change
// a role, delete (handing the endpoints to another human, or removing them), issue a
// password-reset link, list and revoke any human's tokens; and a human changing their own
// password. Every admin action writes a human_audit row in the transaction that made it.
// Authorisation (admin, or the human themself) is the caller's check.

import { z } from 'zod';
import { withTx, type Queryable } from '../db/pool.js';
import { AppError, invalidArgument, notFound } from '../domain/errors.js';
import { maxLength } from '../domain/issues.js';
import { parseInput } from '../domain/todo.js';
import { listApiTokens, revokeApiToken, type ApiToken } from '../store/api-tokens.js';
import { revokeEndpoint, rotateCredential } from '../store/endpoints.js';
import {
  announceHumanGone,
  cutOffHuman,
  deleteEndpointsOf,
  endSignIns,
  insertHumanAudit,
  listHumanAudit,
  liveEndpointIds,
  transferEndpoints,
  type CutOff,
  type HumanAuditEntry,
} from '../store/human-lifecycle.js';
import {
  deleteHumanRow,
  getHuman,
  getHumanWithPassword,
  lockHumanAndAdmins,
  setPassword,
  updateHuman as updateRow,
  type Human,
} from '../store/humans.js';
import { humanGrantIds, revokeGrants } from '../store/oauth.js';
import { unlinkHumanOidc as unlinkOidcRow } from '../store/oidc.js';
import type { IdentityDeps, Principal } from './principal.js';
import { hashPassword, newSecret, secretPrefix, verifyPassword } from './secrets.js';
import { password, resetLink } from './setup.js';

const humanId = z.string().min(1).check(maxLength(100));

export const updateInput = z
  .strictObject({ state: z.enum(['active', 'disabled']).optional(), role: z.enum(['admin', 'member']).optional() })
  .refine((v) => v.state !== undefined || v.role !== undefined, {
    message: 'give state, role or both',
    path: ['state'],
  });

export const deleteInput = z.strictObject({ transfer_endpoints_to: humanId.optional() });

/** What else a reset ends at once, when the admin suspects the account is compromised. */
export const resetInput = z.strictObject({
  revoke_oauth_grants: z.boolean().optional(),
  rotate_endpoint_credentials: z.boolean().optional(),
});

export const passwordInput = z.strictObject({
  current: z.string().min(1).check(maxLength(200)),
  new: password,
  keep_sessions: z.boolean().optional(),
});

/**
 * Locks the human and every active admin (store/humans.ts lockHumanAndAdmins) and
 * returns the human; refuses, with `failed_precondition`, a change that would leave no
 * active admin. `staysAdmin` says whether the human is still an active admin after it.
 */
async function lockGuarded(
  tx: Queryable,
  id: string,
  what: string,
  staysAdmin: (h: Human) => boolean,
  also: string[] = [],
): Promise<{ human: Human; locked: Human[] }> {
  // One statement locks every row the change needs, in id order: no two changes deadlock.
  const locked = await lockHumanAndAdmins(tx, [id, ...also]);
  const human = locked.find((h) => h.id === id);
  if (!human) throw notFound('human', id);
  const others = locked.filter((h) => h.id !== id && h.role === 'admin' && h.state === 'active').length;
  if (human.role === 'admin' && human.state === 'active' && !staysAdmin(human) && others === 0) {
    throw new AppError(
      'failed_precondition',
      `${human.email} is the last active admin: cannot ${what}; make another human an admin first`,
      { id },
    );
  }
  return { human, locked };
}

/** PATCH a human: state and/or role. Disabling cuts the human off at once, on every instance. */
export async function updateHuman(deps: IdentityDeps, actor: Principal, id: string, input: unknown) {
  const data = parseInput(updateInput, input);
  const result = await withTx(deps.db, async (tx) => {
    const { state, role } = data;
    const after = (h: Human) => ({ state: state ?? h.state, role: role ?? h.role });
    const staysAdmin = (h: Human) => after(h).state === 'active' && after(h).role === 'admin';
    const { human: before } = await lockGuarded(tx, id, changeWords(state, role), staysAdmin);
    const next = after(before);
    const human = (await updateRow(tx, id, next)) as Human;
    let cutOff: CutOff | null = null;
    if (before.state !== next.state) {
      if (next.state === 'disabled') cutOff = await cutOffHuman(tx, id);
      await audit(tx, id, actor, next.state === 'disabled' ? 'disable' : 'enable', cutOff ? { ...cutOff } : {});
    }
    if (before.role !== next.role) await audit(tx, id, actor, 'role', { from: before.role, to: next.role });
    return { human, cutOff };
  });
  for (const endpointId of result.cutOff?.endpoint_ids ?? []) deps.credentials?.forget(endpointId);
  if (!result.cutOff) return { human: result.human };
  const { endpoint_ids: _ids, ...ended } = result.cutOff;
  return { human: result.human, ended };
}

function changeWords(state: string | undefined, role: string | undefined): string {
  if (state === 'disabled') return 'disable them';
  if (role === 'member') return 'make them a member';
  return 'change them';
}

function audit(
  tx: Queryable,
  humanId: string,
  actor: Principal,
  action: Parameters<typeof insertHumanAudit>[1]['action'],
  detail: Record<string, unknown> = {},
) {
  return insertHumanAudit(tx, { humanId, actorHumanId: actor.human.id, action, detail });
}

/**
 * Deletes a human. With `transfer_endpoints_to` (an active human), every endpoint of
 * theirs moves to that human, live sessions and all. Without it, their live endpoints are
 * revoked as an endpoint revoke does (credential, sessions, streams; live todos
 * dead-lettered) and then deleted with their todos: nothing is left without an owner.
 */
export async function deleteHuman(deps: IdentityDeps, actor: Principal, id: string, input: unknown) {
  const data = parseInput(deleteInput, input ?? {});
  const to = data.transfer_endpoints_to;
  if (to === id) throw invalidArgument('transfer_endpoints_to', 'must be another human than the one deleted');
  const result = await withTx(deps.db, async (tx) => {
    const { human, locked } = await lockGuarded(tx, id, 'delete them', () => false, to === undefined ? [] : [to]);
    let moved = 0;
    let revoked: string[] = [];
    if (to !== undefined) {
      const target = locked.find((h) => h.id === to);
      if (!target) throw invalidArgument('transfer_endpoints_to', `human ${to} does not exist`);
      if (target.state !== 'active') throw invalidArgument('transfer_endpoints_to', `${target.email} is disabled`);
      moved = await transferEndpoints(tx, id, to);
    } else {
      revoked = await liveEndpointIds(tx, id);
      for (const endpointId of revoked) await revokeEndpoint(tx, endpointId);
      await deleteEndpointsOf(tx, id);
    }
    await deleteHumanRow(tx, id);
    await announceHumanGone(tx, id);
    await audit(tx, id, actor, 'delete', {
      email: human.email,
      role: human.role,
      ...(to !== undefined
        ? { transfer_endpoints_to: to, endpoints_moved: moved }
        : { endpoints_revoked: revoked.length }),
    });
    return { moved, revoked };
  });
  for (const endpointId of result.revoked) deps.credentials?.forget(endpointId);
  return to !== undefined
    ? { deleted: true, endpoints_transferred: result.moved }
    : { deleted: true, endpoints_revoked: result.revoked.length };
}

/**
 * An admin-issued one-time password-reset link (1 h) for an active human. For a
 * compromised account the admin can also end, at once and in one transaction with the
 * audit row, every OAuth grant the human gave (their MCP sessions close) and every live
 * endpoint's credential: each is replaced, with no grace, by one nobody is shown, so the
 * owner runs `endpoint rotate` once signed in again (docs/design/people.md, "Reset").
 */
export async function issueReset(deps: IdentityDeps, actor: Principal, id: string, input?: unknown) {
  const data = parseInput(resetInput, input ?? {});
  const human = await getHuman(deps.db, id);
  if (!human) throw notFound('human', id);
  if (human.state !== 'active') {
    throw new AppError(
      'failed_precondition',
      `${human.email} is disabled: enable them before resetting their password`,
      {
        id,
      },
    );
  }
  const ended = await withTx(deps.db, async (tx) => {
    const grants = data.revoke_oauth_grants ? await revokeGrants(tx, await humanGrantIds(tx, id), 'by_admin') : null;
    const rotated = data.rotate_endpoint_credentials ? await replaceCredentials(tx, id) : null;
    const counts = {
      ...(grants && { oauth_grants_revoked: grants.grants_revoked, sessions_closed: grants.sessions_closed }),
      ...(rotated && { endpoint_credentials_rotated: rotated.length }),
    };
    return { counts, endpointIds: [...(grants?.endpoint_ids ?? []), ...(rotated ?? [])] };
  });
  for (const endpointId of new Set(ended.endpointIds)) deps.credentials?.forget(endpointId);
  const link = await resetLink(deps, id);
  await audit(deps.db, id, actor, 'reset', { expires_at: link.expires_at.toISOString(), ...ended.counts });
  return { human, ...link, ...ended.counts };
}

/** Replaces the credential of each of the human's live endpoints, grace 0; their ids. */
async function replaceCredentials(tx: Queryable, humanId: string): Promise<string[]> {
  const ids = await liveEndpointIds(tx, humanId);
  for (const endpointId of ids) {
    const { secret, hash } = newSecret('sbk');
    await rotateCredential(tx, humanId, endpointId, {
      credentialHash: hash,
      credentialPrefix: secretPrefix(secret),
      graceSeconds: 0,
    });
  }
  return ids;
}

export async function listHumanTokens(deps: IdentityDeps, id: string): Promise<ApiToken[]> {
  if (!(await getHuman(deps.db, id))) throw notFound('human', id);
  return listApiTokens(deps.db, id);
}

export const auditQuery = z.strictObject({
  limit: z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(200))
    .optional(),
  before: z
    .string()
    .regex(/^\d{1,18}$/, 'must be an entry id from an earlier page')
    .optional(),
});

/**
 * A human's audit (docs/design/people.md, "The audit"), newest first, 50 a page (at most
 * 200); `next_before` continues it. Admins only: the route authorises.
 */
export async function listHumanAuditPage(
  deps: IdentityDeps,
  id: string,
  query: unknown,
): Promise<{ entries: HumanAuditEntry[]; next_before: string | null }> {
  const data = parseInput(auditQuery, query ?? {});
  if (!(await getHuman(deps.db, id))) throw notFound('human', id);
  const limit = data.limit ?? 50;
  const rows = await listHumanAudit(deps.db, id, { limit: limit + 1, beforeId: data.before ?? null });
  const entries = rows.slice(0, limit);
  return { entries, next_before: rows.length > limit ? (entries.at(-1)?.id ?? null) : null };
}

export async function revokeHumanToken(deps: IdentityDeps, actor: Principal, id: string, tokenId: string) {
  return withTx(deps.db, async (tx) => {
    const token = await revokeApiToken(tx, id, tokenId);
    if (!token) throw notFound('token', tokenId);
    await audit(tx, id, actor, 'token_revoke', { token_id: tokenId, name: token.name });
    return token;
  });
}

/**
 * Removes a human's link to their OIDC provider account (docs/design/oauth.md,
 * "Unlinking"): their next sign-in through the provider links whichever account of theirs
 * it comes from, by verified e-mail, as a first sign-in does. Their password, tokens and
 * sessions are left alone. failed_precondition when they are not linked.
 */
export async function unlinkHumanOidc(deps: IdentityDeps, actor: Principal, id: string) {
  return withTx(deps.db, async (tx) => {
    const human = await getHuman(tx, id);
    if (!human) throw notFound('human', id);
    const unlinked = await unlinkOidcRow(tx, id);
    if (!unlinked) {
      throw new AppError('failed_precondition', `${human.email} is not linked to a provider account`, { id });
    }
    await audit(tx, id, actor, 'oidc_unlink', { issuer: unlinked.issuer, subject: unlinked.subject });
    return { human, unlinked };
  });
}

/**
 * A human changes their own password. Unless `keep_sessions`, every other sign-in ends:
 * their board sessions and every API token but the one making this call.
 */
export async function changeOwnPassword(deps: IdentityDeps, principal: Principal, input: unknown) {
  const data = parseInput(passwordInput, input);
  const found = await getHumanWithPassword(deps.db, principal.human.id);
  const ok = found?.password_hash ? await verifyPassword(data.current, found.password_hash) : false;
  if (!ok) throw invalidArgument('current', 'is not your current password');
  const hash = await hashPassword(data.new);
  return withTx(deps.db, async (tx) => {
    await setPassword(tx, principal.human.id, hash);
    const ended = data.keep_sessions
      ? { tokens_revoked: 0, board_sessions_ended: 0 }
      : await endSignIns(tx, principal.human.id, principal.token?.id ?? null);
    await audit(tx, principal.human.id, principal, 'password', {
      kept_sessions: data.keep_sessions === true,
      ...ended,
    });
    return { changed: true as const, ...ended };
  });
}
