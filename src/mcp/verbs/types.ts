// What a verb is to the MCP surface: a name, a description, the schemas of its arguments
// and of its answer, and a function of the caller's context and raw arguments. The input
// schema is the very one the use case behind the verb parses the arguments with, so what
// tools/list shows is what is checked; the output schema describes what `run` answers.

import type { z } from 'zod';
import type { Endpoint } from '../../endpoints/credentials.js';
import type { MessageDeps } from '../../messages/context.js';
import type { HookGuard } from '../../hooks/guard.js';
import type { Keyring } from '../../secrets/keyring.js';
import type { RoutingLimits } from '../../routing/rules.js';
import type { HandoffSettings } from '../../grants/handoff.js';

export type { HandoffSettings };
import type { SessionDeps } from '../../sessions/index.js';
import type { Agent, TodoDeps } from '../../todos/index.js';
import type { Waiters } from '../../todos/waiters.js';

export interface VerbContext {
  todos: TodoDeps;
  sessions: SessionDeps;
  messages: MessageDeps;
  /** The caller's endpoint as authenticated on this very request (grants are current). */
  endpoint: Endpoint;
  sessionId: string;
  agent: Agent;
  /** This instance's long-poll waits (claim_next and next_message with wait_seconds). */
  waiters: Waiters;
  /** The URL people and agents reach this server at (hints name its troubleshooting page). */
  publicUrl: string;
  /** The request's abort signal, made on first use: aborted when the client goes away. */
  signal?: () => AbortSignal;
  /** The SSRF guard notify hooks are checked by (configured allow-list); absent: the strictest. */
  hookGuard?: HookGuard;
  /** Seals the signing secrets the hooks and webhooks verbs write (docs/design/intake.md); absent: as issued. */
  keyring?: Keyring;
  /** Bounds on routing rules and the work-order window (docs/design/routing.md); absent: the defaults. */
  routing?: RoutingSettings;
  /** The hand-off depth bound (SWITCHBOARD_HANDOFF_DEPTH_MAX); absent: the default. */
  handoff?: HandoffSettings;
}

/** The routing settings the rules and quarantine verbs apply (SWITCHBOARD_RULES_MAX and the rest). */
export type RoutingSettings = RoutingLimits & { workOrderSeconds: number };

/**
 * MCP tool annotations (2025-06-18): hints a client may use to decide whether to ask
 * before a call. Every verb sets all four; nothing here reaches outside Switchboard.
 */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  /** Only meaningful for a verb that writes: it may delete or overwrite something for good. */
  destructiveHint: boolean;
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint: boolean;
  openWorldHint: false;
}

/** Reads: list, get, whoami, status. */
export const READS: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
/** Writes whose repeat changes more (a new todo, a new claim, a message sent). */
export const WRITES: ToolAnnotations = { ...READS, readOnlyHint: false, idempotentHint: false };
/** Writes whose repeat has no further effect (a settled claim, an acknowledgement, a policy set). */
export const SETTLES: ToolAnnotations = { ...READS, readOnlyHint: false };
/** Deletes or replaces for good (clear, delete, rotate). */
export const DESTROYS: ToolAnnotations = { ...READS, readOnlyHint: false, destructiveHint: true };

export interface Verb {
  name: string;
  description: string;
  /** tools/list shows them as `annotations`. */
  annotations: ToolAnnotations;
  /** What the use case parses the arguments with; tools/list shows it as `inputSchema`. */
  input: z.ZodObject;
  /** The JSON a successful call answers (structuredContent); tools/list shows it as `outputSchema`. */
  output: z.ZodType;
  run(ctx: VerbContext, args: Record<string, unknown>): Promise<object>;
}
