// Verb outcomes → MCP tool results: the one mapping table of the MCP edge. A success is
// returned both as structuredContent and as JSON text in content[0]; a domain failure is
// a result with isError and `{"error": {"code", "message", ...details}}` as JSON text
// only, with no structuredContent: the SDK 1.x client checks any structuredContent
// against the tool's outputSchema, errors included, and would turn the error into an
// unreadable -32602 (docs/design/mcp-surface.md, "Tool results and errors"). Internal
// errors are logged and never shown. Malformed JSON-RPC is not handled here: it stays a
// protocol error of the SDK.

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { databaseTimeout, isDatabaseUnavailable } from '../http/errors.js';
import { AppError } from '../domain/errors.js';

export interface ErrorLog {
  error(obj: object, msg: string): void;
}

/** Dates become RFC 3339 strings and undefined fields vanish, exactly as on the wire. */
function wire(value: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

export function toolResult(value: object): CallToolResult {
  const text = JSON.stringify(value);
  return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
}

function errorResult(code: string, message: string, details?: Record<string, unknown>): CallToolResult {
  const body = { error: { code, message, ...details } };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** The code of an error result (as errorResult wrote it), or 'error' when it carries none. */
export function errorCodeOf(result: CallToolResult): string {
  const first = result.content[0];
  if (first?.type !== 'text') return 'error';
  try {
    const code = (JSON.parse(first.text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : 'error';
  } catch {
    return 'error';
  }
}

export function toolError(err: unknown, log: ErrorLog, verb: string): CallToolResult {
  if (err instanceof AppError) return errorResult(err.code, err.message, err.details && wire(err.details));
  if (isDatabaseUnavailable(err)) return errorResult('unavailable', 'the database is unavailable; retry shortly');
  const timedOut = databaseTimeout(err);
  if (timedOut) return errorResult('unavailable', timedOut);
  log.error({ err, verb }, 'MCP verb failed');
  return errorResult('internal', 'internal error; the server log has the details');
}

export { errorResult };
