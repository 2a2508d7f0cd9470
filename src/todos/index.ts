// The todo use cases, for the surfaces (MCP, API, board) to call.

export type { Agent, Sender, TodoDeps } from './context.js';
export { createTodo, type CreateTarget } from './create.js';
export { claim, claimNext, type ClaimNextResult, type ClaimResult } from './claim.js';
export { heartbeat, complete, fail, release } from './lease.js';
export { retryNow, cancel, getTodoWithAttempts } from './operator.js';
export { getTodo, listTodos, type ReadScope } from './read.js';
