// Characters PostgreSQL cannot store. U+0000 fits in neither text nor jsonb; an unpaired
// UTF-16 surrogate (U+D800..U+DFFF without its partner) reaches jsonb as a `\ud800` escape,
// which jsonb refuses. No value containing either can ever be valid; a use case that does
// not refuse it itself would pass it to a query and fail as an internal error. The edges
// (HTTP, MCP, WebSocket) refuse it first, naming the field. Pure; iterative, so a deeply
// nested value cannot overflow the stack.

/** What the edges answer for such a field. */
export const UNSTORABLE_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether `text` holds a character PostgreSQL cannot store. */
export function unstorable(text: string): boolean {
  return text.includes('\u0000') || UNPAIRED_SURROGATE.test(text);
}

/**
 * The first top-level field of `value` holding an unstorable character anywhere (in a
 * string or a key, at any depth), `''` when `value` is itself such a string, or null when
 * there is none. The name is printable: its own NUL characters are written `\u0000`.
 */
export function unstorableField(value: unknown): string | null {
  if (typeof value === 'string') return unstorable(value) ? '' : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    if (unstorable(key) || containsUnstorable(item)) return JSON.stringify(key).slice(1, -1);
  }
  return null;
}

function containsUnstorable(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (unstorable(item)) return true;
    } else if (Array.isArray(item)) {
      // One by one: spreading an array of a million items would overflow the stack.
      for (const nested of item as unknown[]) stack.push(nested);
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, nested] of Object.entries(item)) {
        if (unstorable(key)) return true;
        stack.push(nested);
      }
    }
  }
  return false;
}
