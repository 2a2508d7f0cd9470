// Endpoints as their owner manages them: vend (credential shown once, with ready-made
// client configuration and the doorbell guidance of src/domain/guidance.ts), list, show,
// change settings (accept_agent_messages), revoke (instant; live todos dead-lettered) and
// delete (only once revoked). Every lookup is scoped by the owning human, so another
// human's endpoint answers exactly like an unknown one.

import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import {
  endpointSettingsInput,
  endpointState,
  MAX_QUEUES,
  rotateInput,
  slugFor,
  vendInput,
  type EndpointState,
} from '../domain/endpoint.js';
import { AppError, invalidArgument, notFound } from '../domain/errors.js';
import { clientConfig, connectGuidance } from '../domain/guidance.js';
import { newId } from '../domain/ids.js';
import { parseInput } from '../domain/todo.js';
import { basicVerbs, expandVerbs } from '../domain/verbs.js';
import { newSecret, secretPrefix } from '../identity/secrets.js';
import type { CredentialForgetting } from './credentials.js';
import {
  deleteRevokedEndpoint,
  getEndpointByRef,
  insertEndpoint,
  listEndpoints as listRows,
  revokeEndpoint as revokeRow,
  updateEndpointSettings,
  type Endpoint,
  rotateCredential,
} from '../store/endpoints.js';
import { lockQueueUses, type QueueUse } from '../store/endpoint-queues.js';
import { listLiveSessions } from '../store/sessions.js';
import { withQuota, type QuotaDeps } from '../quotas/check.js';

export interface EndpointDeps extends QuotaDeps {
  db: Queryable;
  publicUrl: string;
  /** The credential answers this process reuses: a revoke drops the endpoint's at once. */
  credentials?: CredentialForgetting;
  /** How long a rotated credential still works (SWITCHBOARD_CREDENTIAL_GRACE); default an hour. */
  credentialGraceSeconds?: number;
}

/** An endpoint as its owner sees it: everything but the owner id, plus the derived state. */
export type EndpointView = Omit<Endpoint, 'human_id'> & { state: EndpointState };

export function endpointView(e: Endpoint, now: Date): EndpointView {
  const { human_id: _owner, ...rest } = e;
  return { ...rest, state: endpointState(e, now) };
}

/** One of this human's endpoints by slug or id, or not_found. */
export async function resolveEndpoint(deps: EndpointDeps, humanId: string, ref: string): Promise<Endpoint> {
  const endpoint = await getEndpointByRef(deps.db, humanId, ref);
  if (!endpoint) throw notFound('endpoint', ref);
  return endpoint;
}

const BASE36 = 'abcdefghijklmnopqrstuvwxyz0123456789';
function randomBase36(length: number): string {
  return Array.from(randomBytes(length), (b) => BASE36[b % 36]).join('');
}

export async function vendEndpoint(deps: EndpointDeps, humanId: string, input: unknown, now: Date) {
  const data = parseInput(vendInput, input);
  const verbs = expandVerbs(data.verbs ?? basicVerbs());
  if (!verbs.ok) throw invalidArgument('verbs', `"${verbs.unknown}" is not a verb or a verb family`);
  const expiresAt = data.expires_at ? new Date(data.expires_at) : null;
  if (expiresAt && expiresAt <= now) throw invalidArgument('expires_at', 'must be in the future');
  const { secret, hash } = newSecret('sbk');
  const endpoint = await withQuota(deps.db, deps, 'endpoints', { humanId }, (tx) =>
    insertEndpoint(tx, {
      id: newId('ep'),
      humanId,
      name: data.name,
      slug: data.slug ?? slugFor(data.name, randomBase36(8)),
      slugChosen: data.slug !== undefined,
      queues: [...new Set(data.queues ?? ['inbox'])],
      verbs: verbs.verbs,
      defaultLeaseSeconds: data.default_lease_seconds ?? null,
      acceptAgentMessages: data.accept_agent_messages ?? false,
      expiresAt,
      credentialHash: hash,
      credentialPrefix: secretPrefix(secret),
    }),
  );
  return {
    endpoint: endpointView(endpoint, now),
    credential: secret,
    ...clientConfig(deps.publicUrl, endpoint.slug, secret),
    guidance: connectGuidance(deps.publicUrl, endpoint.slug),
  };
}

export async function listEndpoints(deps: EndpointDeps, humanId: string, now: Date): Promise<EndpointView[]> {
  return (await listRows(deps.db, humanId)).map((e) => endpointView(e, now));
}

export async function showEndpoint(deps: EndpointDeps, humanId: string, ref: string, now: Date) {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const sessions = await listLiveSessions(deps.db, endpoint.id);
  return {
    endpoint: endpointView(endpoint, now),
    sessions: sessions.map(({ endpoint_id: _endpoint, ...session }) => session),
    guidance: connectGuidance(deps.publicUrl, endpoint.slug),
  };
}

/** Changes the owner's settings of a live endpoint; a revoked one is `conflict`. */
export async function updateEndpoint(deps: EndpointDeps, humanId: string, ref: string, input: unknown, now: Date) {
  const data = parseInput(endpointSettingsInput, input ?? {});
  if (Object.values(data).every((v) => v === undefined)) {
    throw invalidArgument(
      'body',
      'name a setting to change: name, default_lease_seconds, add_queues, remove_queues or accept_agent_messages',
    );
  }
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const removing = [...new Set(data.remove_queues ?? [])];
  checkRemoval(endpoint, removing, data.add_queues ?? []);
  const settings = {
    acceptAgentMessages: data.accept_agent_messages,
    name: data.name,
    defaultLeaseSeconds: data.default_lease_seconds,
    addQueues: data.add_queues,
    removeQueues: removing,
    maxQueues: MAX_QUEUES,
  };
  const updated =
    removing.length === 0
      ? await updateEndpointSettings(deps.db, humanId, endpoint.id, settings)
      : await inTransaction(deps.db, async (tx) => {
          refuseUsedQueues(await lockQueueUses(tx, endpoint.id, removing));
          return updateEndpointSettings(tx, humanId, endpoint.id, settings);
        });
  if (!updated) {
    // Revoked, or (checked under the row's lock) more queues than an endpoint may have or
    // none left (a racing edit removed the others).
    const current = await resolveEndpoint(deps, humanId, ref);
    if (current.revoked_at) throw new AppError('conflict', `endpoint ${endpoint.slug} is revoked`, { id: endpoint.id });
    if (current.queues.every((q) => removing.includes(q))) throw keepOneQueue();
    throw invalidArgument(
      'add_queues',
      `an endpoint has at most ${MAX_QUEUES} queues (it has ${current.queues.length})`,
    );
  }
  // Reused credential answers carry the endpoint row: its queues and lease decide claims.
  deps.credentials?.forget(endpoint.id);
  return { endpoint: endpointView(updated, now) };
}

/** A removal names granted queues only, not ones it also adds, and leaves one at least. */
function checkRemoval(endpoint: Endpoint, removing: string[], adding: string[]): void {
  if (removing.length === 0) return;
  const unknown = removing.find((q) => !endpoint.queues.includes(q));
  if (unknown !== undefined) {
    throw invalidArgument(
      'remove_queues',
      `"${unknown}" is not one of ${endpoint.slug}'s queues (${endpoint.queues.join(', ')})`,
    );
  }
  const both = removing.find((q) => adding.includes(q));
  if (both !== undefined) throw invalidArgument('remove_queues', `"${both}" is both added and removed`);
  if (adding.length === 0 && endpoint.queues.every((q) => removing.includes(q))) throw keepOneQueue();
}

function keepOneQueue(): AppError {
  return invalidArgument('remove_queues', 'an endpoint keeps at least one queue: add another first');
}

/** Refuses, naming what to do first, when a queue to remove still has work or senders. */
function refuseUsedQueues(uses: QueueUse[]): void {
  const used = uses.filter((u) => u.todos + u.schedules + u.webhooks > 0);
  if (used.length === 0) return;
  const counted = (n: number, noun: string) => (n === 0 ? '' : `${n} ${noun}${n === 1 ? '' : 's'}`);
  const what = used.map((u) => {
    const parts = [
      counted(u.todos, 'live todo'),
      counted(u.schedules, 'schedule'),
      counted(u.webhooks, 'webhook'),
    ].filter(Boolean);
    return `"${u.queue}" has ${parts.join(', ')}`;
  });
  throw new AppError(
    'failed_precondition',
    `remove_queues: ${what.join('; ')}: finish or cancel its todos and delete its schedules and webhooks first`,
    { field: 'remove_queues', uses: used },
  );
}

/**
 * A new credential for a live endpoint, slug unchanged (docs/design/mcp-surface.md,
 * "Rotating a credential"): shown once, like vend's; the old one keeps working for
 * `grace_seconds` (default SWITCHBOARD_CREDENTIAL_GRACE; 0 ends it now).
 */
export async function rotateEndpointCredential(
  deps: EndpointDeps,
  humanId: string,
  ref: string,
  input: unknown,
  now: Date,
) {
  const data = parseInput(rotateInput, input ?? {});
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const { secret, hash } = newSecret('sbk');
  const rotated = await rotateCredential(deps.db, humanId, endpoint.id, {
    credentialHash: hash,
    credentialPrefix: secretPrefix(secret),
    graceSeconds: data.grace_seconds ?? deps.credentialGraceSeconds ?? 3600,
  });
  if (!rotated) throw new AppError('conflict', `endpoint ${endpoint.slug} is revoked`, { id: endpoint.id });
  deps.credentials?.forget(endpoint.id);
  const { previous_valid_until: previousValidUntil, ...row } = rotated;
  return {
    endpoint: endpointView(row, now),
    credential: secret,
    previous_valid_until: previousValidUntil,
    ...clientConfig(deps.publicUrl, endpoint.slug, secret),
    guidance: connectGuidance(deps.publicUrl, endpoint.slug),
  };
}

export async function revokeEndpoint(deps: EndpointDeps, humanId: string, ref: string, now: Date) {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  const revoked = await revokeRow(deps.db, endpoint.id);
  deps.credentials?.forget(endpoint.id);
  if (!revoked) return { endpoint: endpointView(endpoint, now), dead_lettered: 0 };
  return { endpoint: endpointView(revoked.endpoint, now), dead_lettered: revoked.dead_lettered };
}

export async function deleteEndpoint(deps: EndpointDeps, humanId: string, ref: string): Promise<{ deleted: true }> {
  const endpoint = await resolveEndpoint(deps, humanId, ref);
  if (!(await deleteRevokedEndpoint(deps.db, humanId, endpoint.id))) {
    throw new AppError('conflict', `endpoint ${endpoint.slug} is not revoked: revoke it before deleting it`, {
      id: endpoint.id,
    });
  }
  return { deleted: true };
}
