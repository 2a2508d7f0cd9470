// How tests read a tool result the way a client does (docs/design/mcp-surface.md, "Tool
// results and errors"): its JSON body is the text of content[0]. A success carries the
// same JSON as structuredContent; an error (isError) carries none, so that an SDK client
// checking structuredContent against the tool's outputSchema still lets the error through.

import assert from 'node:assert/strict';

interface ToolResultLike {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool bodies are checked field by field
export type ToolBody = any;

/** The JSON body of a tool result, after checking its two carriers agree as described above. */
export function toolBody(answer: object): ToolBody {
  const result = answer as ToolResultLike;
  const first = Array.isArray(result.content) ? (result.content[0] as { type?: string; text?: string }) : undefined;
  assert.equal(first?.type, 'text', `content[0] is the JSON text: ${JSON.stringify(result)}`);
  const body: ToolBody = JSON.parse(first.text ?? '');
  if (result.isError) {
    assert.equal(
      result.structuredContent,
      undefined,
      `an error carries no structuredContent: ${JSON.stringify(result)}`,
    );
  } else {
    assert.deepEqual(result.structuredContent, body, 'structuredContent and content[0] carry the same JSON');
  }
  return body;
}

/** The `{code, message, …}` of an error result. */
export function toolError(answer: object): ToolBody {
  assert.equal((answer as ToolResultLike).isError, true, `an error result: ${JSON.stringify(answer)}`);
  return toolBody(answer).error;
}
