// Sign-in, tokens and humans on the wire (docs/design/people.md, docs/design/api-contract.md):
// the answers of /api/v1/setup, /auth/*, /whoami, /tokens, /humans and /me/password. A
// token's secret appears only in the answer that mints it. The use cases build the values
// (src/identity/*.ts); test/api/contract-answers.test.ts holds each schema to its use
// case's type and to real answers.

import { z } from 'zod';
import { time } from './shapes.js';

/** A human (src/store/humans.ts, Human): never a password hash. */
export const humanOut = z.object({
  id: z.string().describe('`hu_…`'),
  email: z.string(),
  display_name: z.string(),
  role: z.enum(['admin', 'member']),
  state: z.enum(['active', 'disabled']),
  created_at: time,
});

/** An API token (src/store/api-tokens.ts, ApiToken): never its secret or hash. */
export const tokenOut = z.object({
  id: z.string().describe('`tk_…`'),
  kind: z.enum(['human', 'workflow']).describe('human: a sign-in; workflow: pushes todos and messages only.'),
  name: z.string(),
  created_at: time,
  last_used_at: time.nullable(),
  expires_at: time.nullable(),
  revoked_at: time.nullable(),
});

export const humanOneOut = z.object({ human: humanOut });
export const humanListOut = z.object({ humans: z.array(humanOut) });

/** login's and cli-token's: a new sign-in token, shown this once. */
export const signedInOut = z.object({
  token: z.string().describe('`sbt_…`: send as `Authorization: Bearer`; shown once.'),
  token_id: z.string(),
  expires_at: time.nullable().describe('Slides forward with use (SWITCHBOARD_TOKEN_TTL).'),
  human: humanOut,
});

export const loggedOutOut = z.object({
  revoked: z.boolean().describe('False when the request carried no token (SWITCHBOARD_AUTH=off).'),
});

export const whoamiOut = z.object({
  human: humanOut,
  token: z
    .object({ id: z.string(), kind: z.enum(['human', 'workflow']), name: z.string(), expires_at: time.nullable() })
    .nullable()
    .describe('The token this request carried; null with SWITCHBOARD_AUTH=off.'),
});

export const tokenListOut = z.object({ tokens: z.array(tokenOut) });
export const tokenMintedOut = z.object({
  token: tokenOut,
  secret: z.string().describe('`sbt_…`: shown once, never stored in clear.'),
});
export const tokenOneOut = z.object({ token: tokenOut });

export const humanCreatedOut = z.object({
  human: humanOut,
  invite_url: z.string().optional().describe('Without a password: the one-time link that sets one.'),
});

/** What disabling a human ended at once (src/store/human-lifecycle.ts, CutOff). */
const endedOut = z.object({
  tokens_revoked: z.number().int(),
  board_sessions_ended: z.number().int(),
  sessions_closed: z.number().int(),
});

export const humanUpdatedOut = z.object({
  human: humanOut,
  ended: endedOut.optional().describe('Present when the change disabled them.'),
});

export const humanDeletedOut = z.union([
  z.object({ deleted: z.literal(true), endpoints_transferred: z.number().int() }),
  z.object({ deleted: z.literal(true), endpoints_revoked: z.number().int() }),
]);

export const resetIssuedOut = z.object({
  human: humanOut,
  reset_url: z.string().describe('One-time, valid until expires_at.'),
  expires_at: time,
  oauth_grants_revoked: z.number().int().optional(),
  sessions_closed: z.number().int().optional(),
  endpoint_credentials_rotated: z.number().int().optional(),
});

export const HUMAN_AUDIT_ACTIONS = [
  'create',
  'disable',
  'enable',
  'role',
  'reset',
  'delete',
  'token_revoke',
  'password',
  'oidc_unlink',
] as const;

export const humanAuditOut = z.object({
  entries: z.array(
    z.object({
      id: z.string(),
      action: z.enum(HUMAN_AUDIT_ACTIONS),
      actor_human_id: z.string(),
      actor_email: z.string().nullable().describe('Null once the actor is deleted.'),
      detail: z.record(z.string(), z.unknown()),
      at: time,
    }),
  ),
  next_before: z.string().nullable().describe('Pass as `before` for the next page; null: no more.'),
});

export const oidcUnlinkedOut = z.object({
  human: humanOut,
  unlinked: z.object({ issuer: z.string(), subject: z.string() }),
});

export const passwordChangedOut = z.object({
  changed: z.literal(true),
  tokens_revoked: z.number().int(),
  board_sessions_ended: z.number().int(),
});
