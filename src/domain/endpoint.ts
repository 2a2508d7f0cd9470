// Endpoints: vend input, slugs and the derived state. Pure; the random part of a slug
// is passed in.

import { z } from 'zod';
import { dateTime, maxLength } from './issues.js';
import { QUEUE_NAME, LEASE_BOUNDS } from './todo.js';

export type EndpointState = 'active' | 'revoked' | 'expired';

export function endpointState(e: { revoked_at: Date | null; expires_at: Date | null }, now: Date): EndpointState {
  if (e.revoked_at) return e.expires_at && e.revoked_at >= e.expires_at ? 'expired' : 'revoked';
  if (e.expires_at && e.expires_at <= now) return 'expired';
  return 'active';
}

/** `name-k3x9ab12`: the name made URL-safe, then 8 random base-36 characters. */
export function slugFor(name: string, random8: string): string {
  const base = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${base || 'agent'}-${random8}`;
}

/**
 * A slug chosen at vend: lowercase letters, digits and inner hyphens, 3–63 characters.
 * No underscore, so a slug never reads as an id (`ep_…`), which shares the same lookup.
 */
export const SLUG = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export const vendInput = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').check(maxLength(80, 'must be at most 80 characters')),
  /** The slug to use instead of the name and a random suffix; unique across the server. */
  slug: z
    .string()
    .regex(SLUG, 'must be 3–63 lowercase letters, digits and hyphens, starting and ending with a letter or digit')
    .optional(),
  queues: z
    .array(z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}'))
    .min(1, 'must name at least one queue')
    .max(50, 'must name at most 50 queues')
    .optional(),
  verbs: z
    .array(z.string().min(1).check(maxLength(64)))
    .max(64)
    .optional(),
  expires_at: dateTime('must be an RFC 3339 time').optional(),
  default_lease_seconds: z.number().int().min(LEASE_BOUNDS.min).max(LEASE_BOUNDS.max).optional(),
  accept_agent_messages: z.boolean().optional(),
});
export type VendInput = z.infer<typeof vendInput>;

/**
 * PATCH of an endpoint's settings. `accept_agent_messages`: whether other endpoints'
 * agents may queue messages into its sessions (docs/design/message-queue.md, "Agent
 * messages"); off unless the owner turns it on.
 */
export const endpointSettingsInput = z.strictObject({
  accept_agent_messages: z.boolean().optional(),
  /** The display name; the slug (what clients are configured with) never changes. */
  name: z.string().trim().min(1, 'must not be empty').check(maxLength(80, 'must be at most 80 characters')).optional(),
  /** The lease a claim gets when it names none; null: the server's default. */
  default_lease_seconds: z.number().int().min(LEASE_BOUNDS.min).max(LEASE_BOUNDS.max).nullable().optional(),
  /** Queues to grant besides the current ones (already granted ones are ignored). */
  add_queues: z
    .array(z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}'))
    .min(1, 'must name at least one queue')
    .max(50, 'must name at most 50 queues')
    .optional(),
  /**
   * Queues no longer granted; refused while a todo is live on one or a schedule or
   * webhook targets it (docs/design/mcp-surface.md, "Changing an endpoint").
   */
  remove_queues: z
    .array(z.string().regex(QUEUE_NAME, 'must match [a-z0-9][a-z0-9_-]{0,62}'))
    .min(1, 'must name at least one queue')
    .max(50, 'must name at most 50 queues')
    .optional(),
});

/** The most queues an endpoint may be granted, as vend allows. */
export const MAX_QUEUES = 50;

/** The longest a rotated credential may keep working: 7 days. */
export const MAX_CREDENTIAL_GRACE_SECONDS = 7 * 86_400;

/** POST …/rotate: how long the replaced credential still works (0: not at all). */
export const rotateInput = z.strictObject({
  grace_seconds: z.number().int().min(0).max(MAX_CREDENTIAL_GRACE_SECONDS).optional(),
});
