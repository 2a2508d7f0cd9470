// Endpoints on the wire, as their owner reads them through the REST API
// (docs/design/api-contract.md): the endpoint, its live sessions, and the credential
// answers (vend, rotate) that show a secret once.

import { z } from 'zod';
import { time } from './shapes.js';

/** An endpoint as its owner sees it (src/endpoints/manage.ts, EndpointView). */
export const endpointOut = z.object({
  id: z.string().describe('`ep_…`'),
  name: z.string(),
  slug: z.string(),
  queues: z.array(z.string()),
  verbs: z.array(z.string()),
  default_lease_seconds: z.number().int().nullable(),
  accept_agent_messages: z.boolean(),
  credential_prefix: z.string().nullable(),
  expires_at: time.nullable(),
  revoked_at: time.nullable(),
  last_seen_at: time.nullable(),
  created_at: time,
  state: z.enum(['active', 'revoked', 'expired']),
});

/** An MCP session of an endpoint (src/store/sessions.ts, McpSession, without its endpoint id). */
export const sessionOut = z.object({
  id: z.string(),
  client_name: z.string().nullable(),
  client_version: z.string().nullable(),
  instance: z.string(),
  stream_open: z.boolean(),
  last_seen_at: time,
  unheard: z.boolean(),
  channel: z.boolean(),
  had_stream: z.boolean(),
  created_at: time,
  closed_at: time.nullable(),
});

/** How to connect a client (src/domain/guidance.ts): commands and configuration, for people to copy. */
const guidance = z.record(z.string(), z.unknown()).describe('Ready-made commands and configuration to connect.');

/** vend's and rotate's: the credential, shown this once, with client configuration built from it. */
export const credentialOut = z.object({
  endpoint: endpointOut,
  credential: z.string().describe('`sbk_…`: shown once, never stored in clear.'),
  mcp_json: z.record(z.string(), z.unknown()).describe('An `.mcp.json` that connects with the credential.'),
  claude_mcp_add: z.string(),
  guidance,
});

export const rotatedOut = credentialOut.extend({
  previous_valid_until: time.nullable().describe('Until when the old credential still works.'),
});

export const endpointShowOut = z.object({ endpoint: endpointOut, sessions: z.array(sessionOut), guidance });
export const endpointListOut = z.object({ endpoints: z.array(endpointOut) });
export const endpointOneOut = z.object({ endpoint: endpointOut });
export const endpointRevokedOut = z.object({
  endpoint: endpointOut,
  dead_lettered: z.number().int().describe('Its pending and claimed todos, now failed.'),
});
