// Statements planned once: a named statement is parsed once per connection, and one marked
// generic (planGeneric) runs on the pool's share whose connections plan cached statements
// generically (generic-share.ts, routeNamedStatements) — so it is planned once per connection too.
// A mark is a promise that the statement's plan does not depend on its values: keyed
// lookups, partial-index predicates and LIMITs written as literals (a generic plan costs a
// LIMIT $n at a tenth of the rows and may sort a whole backlog for it), no parameter
// standing for a state. The create, ring, notify-hook and batched claim statements are
// marked (the claim batch writes its size into its LIMIT: a text per size). Statement texts
// put together at run time from a few fixed shapes are named by a digest of the text
// (docs/design/coalescing.md, "Planning"). Behind a transaction pooler the pool drops every
// name (pool.ts), so these run unnamed there, exactly as before.

import { createHash } from 'node:crypto';

/**
 * The most distinct texts named by digest; past it a text runs unnamed. The shapes are a
 * handful; the bound only keeps a caller that put a value into its text from growing
 * every connection's set of prepared statements without end.
 */
const MAX_NAMED = 256;

const names = new Map<string, string>();
const marked = new WeakSet<object>();

export interface StatementConfig {
  name?: string;
  text: string;
  values: unknown[];
}

/** Marks a named statement config to be planned generically on the pool's named share. */
export function planGeneric<C extends StatementConfig>(config: C): C {
  marked.add(config);
  return config;
}

/** Whether a statement config is named and marked by planGeneric. */
export function isPlannedGeneric(config: unknown): boolean {
  return typeof config === 'object' && config !== null && marked.has(config) && 'name' in config;
}

/** A generic statement config for a built `text`, named by a digest of the text (equal texts share a name). */
export function prepared(text: string, values: unknown[]): StatementConfig {
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_NAMED) return { text, values };
    name = `sb_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return planGeneric({ name, text, values });
}
