// Names for statements whose text is put together at run time from a few fixed shapes (a
// ring pass per reason, say). A named statement is parsed once per connection and, once
// PostgreSQL's plan cache finds a generic plan as cheap as the custom ones (after five
// runs), planned once too; an unnamed one is parsed and planned on every run. For the
// CTE statements of the create and ring paths the planning cost more than the execution
// (docs/design/coalescing.md, "Planning"). Behind a transaction pooler the pool drops every
// name (pool.ts), so these run unnamed there, exactly as before.

import { createHash } from 'node:crypto';

/**
 * The most distinct texts named; past it a text runs unnamed. The shapes are a handful;
 * the bound only keeps a caller that put a value into its text from growing every
 * connection's set of prepared statements without end.
 */
const MAX_NAMED = 256;

const names = new Map<string, string>();

/** The statement config for `text`: named by a digest of the text, so equal texts share one name. */
export function prepared(text: string, values: unknown[]): { name?: string; text: string; values: unknown[] } {
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_NAMED) return { text, values };
    name = `sb_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
