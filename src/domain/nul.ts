// U+0000 in input. PostgreSQL text and jsonb cannot hold it, so no value containing it can
// ever be valid; a use case that does not refuse it itself would pass it to a query and
// fail as an internal error. The edges (HTTP, MCP, WebSocket) refuse it first, naming
// the field. Pure; iterative, so a deeply nested value cannot overflow the stack.

/**
 * The first top-level field of `value` holding a NUL character anywhere (in a string or a
 * key, at any depth), `''` when `value` is itself such a string, or null when there is none.
 */
export function nulField(value: unknown): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? '' : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000') || containsNul(item)) return key.split('\u0000').join('\\u0000');
  }
  return null;
}

function containsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return true;
    } else if (Array.isArray(item)) {
      // One by one: spreading an array of a million items would overflow the stack.
      for (const nested of item as unknown[]) stack.push(nested);
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, nested] of Object.entries(item)) {
        if (key.includes('\u0000')) return true;
        stack.push(nested);
      }
    }
  }
  return false;
}
