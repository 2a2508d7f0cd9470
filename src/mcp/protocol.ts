// The MCP Server that answers one request of a session (sessions.ts builds one per POST
// that goes through the SDK): what `initialize` advertises (tools, the claude/channel
// capability, serverInfo, the instructions with this endpoint's lease length) and the
// tools/list and tools/call handlers. The caller's endpoint is read from the request's
// auth info on every call, so a changed grant takes effect on the next request.

import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, invalidArgument } from '../domain/errors.js';
import { isStatelessId } from '../domain/ids.js';
import { UNSTORABLE_MESSAGE, unstorableField } from '../domain/unstorable.js';
import type { Endpoint } from '../endpoints/credentials.js';
import type { MessageDeps } from '../messages/context.js';
import type { SessionDeps } from '../sessions/index.js';
import type { TodoDeps } from '../todos/index.js';
import type { Waiters } from '../todos/waiters.js';
import type { VersionInfo } from '../version.js';
import { errorCodeOf, toolError, toolResult, type ErrorLog } from './errors.js';
import { toolsFor, verbFor, type VerbContext } from './verbs/index.js';
import type { HookGuard } from '../hooks/guard.js';
import type { Keyring } from '../secrets/keyring.js';
import type { HandoffSettings, RoutingSettings } from './verbs/types.js';
import { NO_TRACING, type Tracing } from '../tracing/index.js';

export interface ProtocolDeps {
  todos: TodoDeps;
  sessions: SessionDeps;
  messages: MessageDeps;
  waiters: Waiters;
  version: VersionInfo;
  /** The URL people and agents reach this server at: self-test hints link its pages. */
  publicUrl: string;
  log: ErrorLog;
  hookGuard?: HookGuard;
  /** Seals and opens signing secrets at rest (hooks and webhooks verbs). */
  keyring?: Keyring;
  /** Bounds on routing rules and the work-order window (docs/design/routing.md); absent: the defaults. */
  routing?: RoutingSettings;
  /** The hand-off depth bound (docs/design/handoff.md); absent: the default. */
  handoff?: HandoffSettings;
  /**
   * One JSON Schema validator for every Server of this instance. The SDK builds an Ajv
   * instance per Server otherwise (18 KiB each); it only checks elicitation answers,
   * which this server never asks for.
   */
  validator: jsonSchemaValidator;
  /** A span per tools/call (docs/design/tracing.md, "MCP"); absent: off. */
  tracing?: Tracing;
}

/** The endpoint this request authenticated as; set by the /mcp routes on every request. */
export function authInfoFor(endpoint: Endpoint, token: string): AuthInfo {
  return { token, clientId: endpoint.id, scopes: endpoint.verbs, extra: { endpoint } };
}

function endpointOf(authInfo: AuthInfo | undefined): Endpoint {
  const endpoint = authInfo?.extra?.endpoint as Endpoint | undefined;
  if (!endpoint) throw new AppError('internal', 'an MCP request reached a verb without an authenticated endpoint');
  return endpoint;
}

export function instructions(version: VersionInfo, leaseSeconds: number): string {
  return [
    `Switchboard ${version.version} (commit ${version.commit}) — a durable work queue for this agent.`,
    '',
    'Contract:',
    '- Take work with claim_next (or claim by id), do it, then complete it.',
    '- Waiting for work: if your client takes channels, a doorbell (notifications/claude/channel on the GET ' +
      'notification stream) tells you when a todo is ready; otherwise call claim_next with wait_seconds, which ' +
      'waits up to that long for work instead of answering {"empty": true} at once.',
    `- A claim holds a lease of ${leaseSeconds} s on this endpoint unless you pass lease_seconds; call heartbeat ` +
      'before any long step so the lease does not run out.',
    '- A claim answers a lease_token: pass it with the id to heartbeat, complete, fail or release when you ' +
      'settle from another session or a request without one (a one-shot client); complete and fail take a ' +
      'summary (and an artifact: a URL, a commit) that the next claim of the todo sees in prior_attempts.',
    '- `conflict` from heartbeat, complete, fail or release says why: if you lost the todo (your lease lapsed ' +
      'and another session took it over), stop working on it; if you never held it, claim it first.',
    '- Every claim ends in complete, fail (it is retried later) or release (it goes back untouched).',
    '- A doorbell (notifications/claude/channel) names a todo: claiming it also acknowledges the doorbell. ' +
      'Heard one but will not claim? ack_doorbell with its meta.ring_id. test_doorbell checks that you hear them.',
    '- Errors are tool results with isError whose text is the JSON {"error": {"code", "message", ...}} (no ' +
      'structuredContent); `invalid_argument` names the field to fix.',
  ].join('\n');
}

export function buildProtocol(deps: ProtocolDeps, endpoint: Endpoint, sessionId: string): Server {
  const leaseSeconds = endpoint.default_lease_seconds ?? deps.todos.defaultLeaseSeconds;
  const server = new Server(
    { name: 'switchboard', version: deps.version.version },
    {
      capabilities: { tools: { listChanged: false }, experimental: { 'claude/channel': {} } },
      instructions: instructions(deps.version, leaseSeconds),
      jsonSchemaValidator: deps.validator,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => ({
    tools: toolsFor(endpointOf(extra.authInfo).verbs),
  }));
  // extra.signal is aborted when the request is cancelled or the transport closes (the
  // /mcp route closes it when the client goes away before the answer).
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(
      deps,
      endpointOf(extra.authInfo),
      sessionId,
      request.params.name,
      request.params.arguments,
      () => extra.signal,
      traceparentOf(request.params._meta),
    ),
  );
  return server;
}

function traceparentOf(meta: Record<string, unknown> | undefined): string | undefined {
  const value = meta?.traceparent;
  return typeof value === 'string' ? value : undefined;
}

/**
 * One tools/call: the grant gate, then the verb, as a tool result (domain errors become
 * `isError` results). Shared by the SDK handler and the direct path in `direct-call.ts`.
 * Traced, it runs in a span named after the verb (`mcp claim_next`), a child of the call's
 * `_meta.traceparent` when it carries one, else of the request's span; the outcome is `ok`
 * or the error code of the result.
 */
export async function callTool(
  deps: ProtocolDeps,
  endpoint: Endpoint,
  sessionId: string,
  name: string,
  args: Record<string, unknown> | undefined,
  signal?: () => AbortSignal,
  traceparent?: string,
): Promise<CallToolResult> {
  const tracing = deps.tracing ?? NO_TRACING;
  if (!tracing.enabled) return runTool(deps, endpoint, sessionId, name, args, signal);
  const span = tracing.start(`mcp ${name}`, {
    parent: traceparent ?? null,
    attributes: { 'mcp.tool.name': name, 'switchboard.endpoint': endpoint.slug },
  });
  try {
    const result = await tracing.activate(span, () => runTool(deps, endpoint, sessionId, name, args, signal));
    const outcome = result.isError ? errorCodeOf(result) : 'ok';
    span.setAttribute('switchboard.outcome', outcome);
    if (result.isError) span.fail(outcome);
    return result;
  } finally {
    span.end();
  }
}

async function runTool(
  deps: ProtocolDeps,
  endpoint: Endpoint,
  sessionId: string,
  name: string,
  args: Record<string, unknown> | undefined,
  signal?: () => AbortSignal,
): Promise<CallToolResult> {
  try {
    const verb = verbFor(endpoint.verbs, name, isStatelessId(sessionId));
    const nul = unstorableField(args);
    if (nul !== null) throw invalidArgument(nul || 'arguments', UNSTORABLE_MESSAGE);
    const ctx: VerbContext = {
      todos: deps.todos,
      sessions: deps.sessions,
      messages: deps.messages,
      waiters: deps.waiters,
      publicUrl: deps.publicUrl,
      endpoint,
      sessionId,
      agent: {
        endpointId: endpoint.id,
        sessionId,
        queues: endpoint.queues,
        defaultLeaseSeconds: endpoint.default_lease_seconds,
        endpointSlug: endpoint.slug,
      },
      ...(deps.hookGuard ? { hookGuard: deps.hookGuard } : {}),
      ...(deps.keyring ? { keyring: deps.keyring } : {}),
      ...(deps.routing ? { routing: deps.routing } : {}),
      ...(deps.handoff ? { handoff: deps.handoff } : {}),
      ...(signal ? { signal } : {}),
    };
    return toolResult(await verb.run(ctx, args ?? {}));
  } catch (err) {
    return toolError(err, deps.log, name);
  }
}
