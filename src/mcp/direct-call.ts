// The direct path for the one request agents send most: a single well-formed
// `tools/call` on a live session. It is answered here, as one JSON response, with the
// same verb code the SDK's handler runs (`callTool`), instead of going through the
// SDK transport — which converts every Node request into a web Request and back and
// runs zod over every message, several times the CPU of the verb itself (bench/README).
//
// Only the exact shape the SDK would accept without complaint takes this path: anything
// else (a batch, a notification, a response, other methods, odd headers or params) goes
// to the SDK transport, which keeps answering every error exactly as before. A client
// must accept both JSON and SSE answers to a POST (spec, "Sending Messages to the
// Server"), so a JSON answer is one it already handles.
//
// A single well-formed client notification (notifications/initialized, …/cancelled) is
// answered here too, with the SDK's 202: the SDK Server built for one request (sessions.ts)
// could do nothing with it — no request of the session is in flight there to cancel, and
// nothing it would record outlives the request — and the SDK's message checks for it were
// about a fifth of what setting up a session allocated (bench/README.md, sessions).
//
// One refusal is answered here too: a request whose params the SDK's schema refuses
// (`invalidParamsOf`), which the SDK's handler would report as -32603, internal error.

import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  JSONRPCNotificationSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';

export interface DirectCall {
  id: string | number;
  name: string;
  args: Record<string, unknown> | undefined;
  /** The call's `_meta.traceparent` (docs/design/tracing.md, "MCP"), when it is a string. */
  traceparent: string | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Headers the SDK would accept for a POST: both answer types, JSON body, a known protocol version. */
function headersAccepted(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  const type = request.headers['content-type'];
  const version = request.headers['mcp-protocol-version'];
  return (
    typeof accept === 'string' &&
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    typeof type === 'string' &&
    /^application\/json\s*(;|$)/i.test(type) &&
    (version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
  );
}

/** The call when this request can take the direct path, else null (the SDK handles it). */
export function directCallOf(request: FastifyRequest): DirectCall | null {
  const body = request.body;
  if (!isRecord(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const id = body.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) return null;
  const params = body.params;
  if (!isRecord(params) || typeof params.name !== 'string') return null;
  const args = params.arguments;
  if (args !== undefined && !isRecord(args)) return null;
  if (params._meta !== undefined && !isRecord(params._meta)) return null;
  if (!headersAccepted(request)) return null;
  const traceparent = params._meta?.traceparent;
  return { id, name: params.name, args, traceparent: typeof traceparent === 'string' ? traceparent : undefined };
}

/**
 * Whether this POST is one client notification the SDK would answer 202 to (its own
 * schema decides, after cheap checks so that other messages are not parsed at all).
 */
export function isDirectNotification(request: FastifyRequest): boolean {
  const body = request.body;
  if (!isRecord(body) || typeof body.method !== 'string' || !body.method.startsWith('notifications/')) return false;
  if ('id' in body || !headersAccepted(request)) return false;
  return JSONRPCNotificationSchema.safeParse(body).success;
}

/** The requests whose params the SDK's handlers parse (a failure there would be -32603). */
const PARAMS_SCHEMAS: Record<string, { safeParse(value: unknown): { success: boolean } }> = {
  initialize: InitializeRequestSchema,
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
};

/** The id of a request (it has an id) to a method the server handles whose params the SDK's schema refuses. */
function invalidRequestId(message: unknown): string | number | null | undefined {
  if (!isRecord(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return undefined;
  if (!('id' in message) || !Object.hasOwn(PARAMS_SCHEMAS, message.method)) return undefined;
  if (PARAMS_SCHEMAS[message.method]?.safeParse(message).success !== false) return undefined;
  return typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
}

/**
 * A request whose params the SDK's schema refuses: its id (null for a batch holding one,
 * which is then not run at all), else undefined. The SDK's handler would report the zod
 * error as -32603 (internal error, with the validator's text); it is the caller's mistake,
 * answered -32602 (invalid params) instead.
 */
export function invalidParamsOf(request: FastifyRequest): { id: string | number | null } | undefined {
  const body = request.body;
  if (Array.isArray(body)) {
    return body.some((message) => invalidRequestId(message) !== undefined) ? { id: null } : undefined;
  }
  const id = invalidRequestId(body);
  return id === undefined ? undefined : { id };
}
