// Todo shapes on the MCP wire (docs/design/mcp-surface.md, "Wire shapes"): `body` and
// `payload` travel only on claims, so listing and reading stay small and an agent reads
// the content of work it holds.

import type { Todo, TodoSummary } from '../../domain/todo.js';

export function todoOut(todo: Todo | TodoSummary): Record<string, unknown> {
  const { body: _body, payload: _payload, ...rest } = todo as Partial<Todo> & TodoSummary;
  return rest;
}
