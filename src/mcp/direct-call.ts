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

import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';

export interface DirectCall {
  id: string | number;
  name: string;
  args: Record<string, unknown> | undefined;
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
  return { id, name: params.name, args };
}
