// Notify hooks as their endpoint manages them (MCP verbs) or its owner does (API, CLI):
// create (URL checked by the SSRF guard, signing secret shown once), list (health, no
// secrets), rotate (new secret, the old one signs alongside for 24 h unless `immediate`,
// re-enables), delete. Another endpoint's hook id answers exactly like an unknown one.

import { ulid } from 'ulid';
import { z } from 'zod';
import { NO_KEYRING, seal, type Keyring } from '../secrets/keyring.js';
import type { Queryable } from '../db/pool.js';
import { AppError, invalidArgument, notFound } from '../domain/errors.js';
import { maxLength } from '../domain/issues.js';
import { parseInput, QUEUE_NAME } from '../domain/todo.js';
import { withQuota, type QuotaDeps } from '../quotas/check.js';
import {
  deleteNotifyHook,
  insertNotifyHook,
  listNotifyHooks,
  rotateNotifyHook,
  type NotifyHook,
} from '../store/notify-hooks.js';
import type { HookGuard } from './guard.js';
import { newHookSecret } from './sign.js';

/** Five per endpoint: enough for a cron runner, a chat relay and spares; each costs a POST per ready todo. */
export const MAX_HOOKS = 5;
/** How long the previous secret keeps signing after a rotation: a day to roll receivers. */
export const ROTATION_GRACE_SECONDS = 24 * 3600;

export interface HookDeps extends QuotaDeps {
  db: Queryable;
  guard: HookGuard;
  /** Seals the signing secret at rest (docs/design/intake.md, "Secrets at rest"); absent: stored as issued. */
  keyring?: Keyring;
}

/** The endpoint a hook belongs to, as the caller was authorised for it. */
export interface HookOwner {
  id: string;
  queues: string[];
}

export interface HookView {
  hook_id: string;
  url: string;
  queues: string[];
  ignore_presence: boolean;
  enabled: boolean;
  disabled_reason: string | null;
  health: {
    consecutive_failures: number;
    last_attempt_at: string | null;
    last_status: number | null;
    last_error: string | null;
  };
  created_at: string;
}

export function hookView(h: NotifyHook): HookView {
  return {
    hook_id: h.id,
    url: h.url,
    queues: h.queues,
    ignore_presence: h.ignore_presence,
    enabled: h.enabled,
    disabled_reason: h.disabled_reason,
    health: {
      consecutive_failures: h.consecutive_failures,
      last_attempt_at: h.last_attempt_at?.toISOString() ?? null,
      last_status: h.last_status,
      last_error: h.last_error,
    },
    created_at: h.created_at.toISOString(),
  };
}

/** create_notify_hook's arguments, as tools/list shows them. */
export const createHookInput = z.strictObject({
  url: z.string().describe('An https:// URL on a public address.'),
  queues: z
    .array(z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}'))
    .max(100)
    .optional()
    .describe('Only these granted queues (default: all).'),
  ignore_presence: z.boolean().optional().describe('Also notify while the endpoint is clocked out.'),
});
/** rotate_notify_hook's and delete_notify_hook's arguments. */
export const hookIdInput = z.strictObject({
  hook_id: z.string().min(1).check(maxLength(64)).describe('The hook id, `nh_…`.'),
});
/** rotate_notify_hook's arguments. */
export const rotateHookInput = z.strictObject({
  hook_id: hookIdInput.shape.hook_id,
  immediate: z
    .boolean()
    .optional()
    .describe(
      'Drop the previous secret(s) at once instead of letting the old one sign for 24 h: for a leaked ' +
        'secret, when receivers can take the new one now.',
    ),
});
/** list_notify_hooks' arguments: none. */
export const listHooksInput = z.strictObject({});

export async function createHook(
  deps: HookDeps,
  owner: HookOwner,
  input: unknown,
): Promise<HookView & { signing_secret: string }> {
  const data = parseInput(createHookInput, input);
  const outside = (data.queues ?? []).find((q) => !owner.queues.includes(q));
  if (outside) throw invalidArgument('queues', `"${outside}" is not one of this endpoint's queues`);
  await deps.guard.resolve(data.url);
  const secret = newHookSecret();
  const hook = await withQuota(deps.db, deps, 'notifyHooks', { endpointId: owner.id }, (tx) =>
    insertNotifyHook(tx, {
      endpointId: owner.id,
      id: `nh_${ulid()}`,
      url: data.url,
      queues: [...new Set(data.queues ?? [])].sort(),
      ignorePresence: data.ignore_presence ?? false,
      secret: seal(deps.keyring ?? NO_KEYRING, secret),
      max: MAX_HOOKS,
    }),
  );
  if (!hook) {
    // A ceiling, not a rate: failed_precondition, which clients do not retry (docs/design/limits.md, "Quotas").
    throw new AppError('failed_precondition', `this endpoint already has ${MAX_HOOKS} notify hooks; delete one first`, {
      max: MAX_HOOKS,
    });
  }
  return { ...hookView(hook), signing_secret: secret };
}

export async function listHooks(
  deps: HookDeps,
  owner: HookOwner,
  input: unknown = {},
): Promise<{ hooks: HookView[]; max: number; used: number }> {
  parseInput(listHooksInput, input);
  const hooks = (await listNotifyHooks(deps.db, owner.id)).map(hookView);
  return { hooks, max: MAX_HOOKS, used: hooks.length };
}

export async function rotateHook(
  deps: HookDeps,
  owner: HookOwner,
  input: unknown,
): Promise<HookView & { signing_secret: string }> {
  const { hook_id, immediate } = parseInput(rotateHookInput, input);
  const secret = newHookSecret();
  const hook = await rotateNotifyHook(deps.db, {
    endpointId: owner.id,
    id: hook_id,
    secret: seal(deps.keyring ?? NO_KEYRING, secret),
    // Every delivery attempt reads the live secrets afresh (hookForAttempt), so with no grace
    // the next attempt, a retry of an older event included, carries only the new signature.
    graceSeconds: immediate === true ? 0 : ROTATION_GRACE_SECONDS,
  });
  if (!hook) throw notFound('notify hook', hook_id);
  return { ...hookView(hook), signing_secret: secret };
}

export async function deleteHook(
  deps: HookDeps,
  owner: HookOwner,
  input: unknown,
): Promise<{ hook_id: string; deleted: true }> {
  const { hook_id } = parseInput(hookIdInput, input);
  if (!(await deleteNotifyHook(deps.db, owner.id, hook_id))) throw notFound('notify hook', hook_id);
  return { hook_id, deleted: true };
}
