// The todo use cases, for the surfaces (MCP, API, board) to call, and the input schemas
// they parse with (tools/list shows the same objects).

export type { Agent, Sender, TodoDeps } from './context.js';
export { agentCreateTodoInput, createTodo, type CreateTarget } from './create.js';
export { claim, claimInput, claimNext, claimNextInput, type ClaimNextResult, type ClaimResult } from './claim.js';
export { heartbeat, heartbeatInput, complete, completeInput, fail, failInput, release, releaseInput } from './lease.js';
export { retryNow, cancel, getTodoWithAttempts } from './operator.js';
export { getTodo, getTodoInput, listTodos, listTodosInput, type ReadScope } from './read.js';
export { type ReadTodo } from './waiting-read.js';
export {
  askHuman,
  answerTodo,
  answersOf,
  needsYou,
  NEEDS_YOU_SHOWN,
  type Answerer,
  type AskedEvent,
  type WaitingTodo,
} from './ask.js';
export { askHumanInput, answerInput } from '../domain/asks.js';
