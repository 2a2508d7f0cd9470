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

/**
 * A success: the value serialised once. `structuredContent` is that text parsed, but only
 * when something reads it (the SDK's path, a test): the direct tools/call path writes the
 * text itself into its answer (`jsonRpcAnswer`), so a result is never serialised, parsed
 * and serialised again on the way out (bench/README.md, "mcp").
 */
export function toolResult(value: object): CallToolResult {
  const text = JSON.stringify(value);
  const result: CallToolResult = { content: [{ type: 'text', text }] };
  let parsed: Record<string, unknown> | undefined;
  Object.defineProperty(result, 'structuredContent', {
    enumerable: true,
    configurable: true,
    get: () => (parsed ??= JSON.parse(text) as Record<string, unknown>),
    set: (replaced: Record<string, unknown>) => {
      parsed = replaced;
      unchanged.delete(result);
    },
  });
  unchanged.set(result, text);
  return result;
}

/** Results of `toolResult` whose structuredContent is still their text, with that text. */
const unchanged = new WeakMap<CallToolResult, string>();

/**
 * The JSON-RPC answer carrying `result`, as the JSON text the direct tools/call path sends:
 * a success of `toolResult` embeds its text twice (as content[0].text, escaped, and as
 * structuredContent, verbatim) without serialising its value again; anything else is
 * serialised as it is.
 */
export function jsonRpcAnswer(id: string | number, result: CallToolResult): string {
  const text = unchanged.get(result);
  const first = result.content[0];
  if (
    text === undefined ||
    result.content.length !== 1 ||
    first?.type !== 'text' ||
    first.text !== text ||
    Object.keys(first).length !== 2 ||
    Object.keys(result).length !== 2
  ) {
    return JSON.stringify({ jsonrpc: '2.0', id, result });
  }
  return (
    `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":` +
    `${JSON.stringify(text)}}],"structuredContent":${text}}}`
  );
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
