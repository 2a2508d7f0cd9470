// What a verb is to the MCP surface: a name, a description and an input schema an agent
// can act on, and a function of the caller's context and raw arguments. The use cases
// behind the verbs validate the arguments; the schema here is what tools/list shows.

import type { z } from 'zod/v4';
import type { Endpoint } from '../../endpoints/credentials.js';
import type { MessageDeps } from '../../messages/context.js';
import type { HookGuard } from '../../hooks/guard.js';
import type { SessionDeps } from '../../sessions/index.js';
import type { Agent, TodoDeps } from '../../todos/index.js';

export interface VerbContext {
  todos: TodoDeps;
  sessions: SessionDeps;
  messages: MessageDeps;
  /** The caller's endpoint as authenticated on this very request (grants are current). */
  endpoint: Endpoint;
  sessionId: string;
  agent: Agent;
  /** The SSRF guard notify hooks are checked by (configured allow-list); absent: the strictest. */
  hookGuard?: HookGuard;
}

export interface Verb {
  name: string;
  description: string;
  input: z.ZodObject;
  run(ctx: VerbContext, args: Record<string, unknown>): Promise<object>;
}
