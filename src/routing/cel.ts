// CEL (the Common Expression Language) for routing rules (docs/design/routing.md,
// "Expressions"): one environment with the two variables a rule sees — `event` (provider,
// type, actor, headers) and `payload` (the delivery's body) — compiled and type-checked
// when a rule is saved, evaluated in-process at delivery. CEL has no loops and no
// recursion; what is left to bound is done here at compile time: the expression's size
// and AST, nested comprehensions (each level multiplies by a list's length), and regular
// expressions (JavaScript's backtracking engine, not RE2: a pattern must be a literal with
// no nested quantifier or back-reference). The per-delivery time budget is the evaluator's
// (rules.ts).

import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import { invalidArgument } from '../domain/errors.js';

/** The variables a rule's expressions read. `actor` and `type` are "" when the provider names none. */
export interface RuleInput {
  event: { provider: string; type: string; actor: string; headers: Record<string, string> };
  payload: unknown;
}

export interface CelLimits {
  /** Characters in one expression or template (SWITCHBOARD_RULE_EXPRESSION_MAX). */
  expressionMax: number;
}

/** A compiled expression: evaluate it over a RuleInput. */
export type Program = (input: RuleInput) => unknown;

/** Comprehension macros: each runs its body once per element of a list or map. */
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** One comprehension inside another is quadratic in the payload; two levels is the most a rule may nest. */
const MAX_COMPREHENSION_DEPTH = 2;
const REGEX_FUNCTIONS = new Set(['matches']);

const environment = new Environment({
  enableOptionalTypes: true,
  homogeneousAggregateLiterals: false,
  limits: { maxAstNodes: 2000, maxDepth: 48, maxListElements: 256, maxMapEntries: 256, maxCallArguments: 16 },
})
  .registerVariable({
    name: 'event',
    schema: { provider: 'string', type: 'string', actor: 'string', headers: 'map<string, string>' },
  })
  .registerVariable('payload', 'dyn');

interface Node {
  op: string;
  args: unknown;
  pos?: number;
}

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && 'op' in v && typeof v.op === 'string';
}

function children(n: Node): Node[] {
  const out: Node[] = [];
  const visit = (v: unknown) => {
    if (isNode(v)) out.push(v);
    else if (Array.isArray(v)) v.forEach(visit);
  };
  visit(n.args);
  return out;
}

/** A method call's name and its arguments' nodes (`rcall`: [name, receiver, args]; `call`: [name, args]). */
function callOf(n: Node): { name: string; args: Node[] } | null {
  if ((n.op !== 'rcall' && n.op !== 'call') || !Array.isArray(n.args) || typeof n.args[0] !== 'string') return null;
  const rest = n.args.slice(1).flat() as unknown[];
  return { name: n.args[0], args: rest.filter(isNode) };
}

/**
 * Star height above 1 (a quantified group holding a quantifier) and back-references are
 * what make a backtracking engine exponential; both are refused. Also anything over 200
 * characters: a rule's pattern is a short filter.
 */
export function unsafePattern(pattern: string): string | null {
  if (pattern.length > 200) return 'is longer than 200 characters';
  if (/\\[1-9]|\\k</.test(pattern)) return 'uses a back-reference';
  const stack: boolean[] = [];
  let quantifiedInside = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      i = end < 0 ? pattern.length : end;
      continue;
    }
    if (c === '(') {
      stack.push(quantifiedInside);
      quantifiedInside = false;
    } else if (c === ')') {
      const inner: boolean = quantifiedInside;
      quantifiedInside = stack.pop() ?? false;
      const next = pattern[i + 1];
      if (inner && (next === '*' || next === '+' || next === '{' || next === '?')) return 'nests a quantifier';
      quantifiedInside = quantifiedInside || inner;
    } else if (c === '*' || c === '+' || c === '{' || c === '?') {
      quantifiedInside = true;
    }
  }
  return null;
}

function checkShape(root: unknown, field: string): void {
  const walk = (n: Node, depth: number) => {
    const call = callOf(n);
    let next = depth;
    if (call && COMPREHENSIONS.has(call.name)) {
      next = depth + 1;
      if (next > MAX_COMPREHENSION_DEPTH) {
        throw invalidArgument(field, `nests more than ${MAX_COMPREHENSION_DEPTH} comprehensions (${call.name})`);
      }
    }
    if (call && REGEX_FUNCTIONS.has(call.name)) {
      const pattern = call.args[call.args.length - 1];
      if (!pattern || pattern.op !== 'value' || typeof pattern.args !== 'string') {
        throw invalidArgument(field, 'matches() takes a literal pattern');
      }
      const why = unsafePattern(pattern.args);
      if (why) throw invalidArgument(field, `matches() pattern ${why}`);
    }
    for (const c of children(n)) walk(c, next);
  };
  if (isNode(root)) walk(root, 0);
}

function firstLine(message: string): string {
  return message.split('\n')[0]?.trim() ?? message;
}

function positionOf(err: unknown): number | null {
  const node = (err as { node?: { pos?: unknown; start?: unknown } }).node;
  if (node && typeof node.pos === 'number') return node.pos;
  if (node && typeof node.start === 'number') return node.start;
  return null;
}

/** An invalid_argument naming the field and the position in it (counted from 0). */
function compileError(field: string, err: unknown, offset: number): Error {
  const pos = positionOf(err);
  const message = firstLine(err instanceof Error ? err.message : String(err));
  const e = invalidArgument(field, pos === null ? message : `${message} (at position ${pos + offset})`);
  if (pos !== null) (e.details as Record<string, unknown>).position = pos + offset;
  return e;
}

/**
 * Compiles one expression: parsed, type-checked against the two variables, its shape
 * bounded. `want` is the types the result may have (`dyn` always passes: a payload field's
 * type is known only at delivery). Throws invalid_argument naming `field`.
 */
export function compile(text: string, field: string, limits: CelLimits, want: string[], offset = 0): Program {
  if (text.length > limits.expressionMax) {
    throw invalidArgument(field, `must be at most ${limits.expressionMax} characters`);
  }
  let parsed: ParseResult;
  try {
    parsed = environment.parse(text);
  } catch (err) {
    throw compileError(field, err, offset);
  }
  const checked = parsed.check();
  if (!checked.valid) throw compileError(field, checked.error, offset);
  const type = checked.type ?? 'dyn';
  if (type !== 'dyn' && !want.includes(type)) {
    throw invalidArgument(field, `must be ${want.join(' or ')}, not ${type}`);
  }
  checkShape(parsed.ast, field);
  return (input): unknown => parsed(input);
}

/** A template: text with `{{ CEL }}` parts, each part's value written as text. */
export type Template = (input: RuleInput) => string;

/** How a value is written into a template: strings as they are, numbers plainly, lists and maps as JSON. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
}

export function compileTemplate(text: string, field: string, limits: CelLimits): Template {
  if (text.length > limits.expressionMax) {
    throw invalidArgument(field, `must be at most ${limits.expressionMax} characters`);
  }
  const parts: (string | Program)[] = [];
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('{{', at);
    if (open < 0) {
      parts.push(text.slice(at));
      break;
    }
    const close = text.indexOf('}}', open + 2);
    if (close < 0) throw invalidArgument(field, `"{{" at position ${open} is not closed by "}}"`);
    if (open > at) parts.push(text.slice(at, open));
    const inner = text.slice(open + 2, close);
    const lead = inner.length - inner.trimStart().length;
    if (inner.trim() === '') throw invalidArgument(field, `empty {{ }} at position ${open}`);
    parts.push(compile(inner.trim(), field, limits, ['string', 'int', 'uint', 'double', 'bool'], open + 2 + lead));
    at = close + 2;
  }
  return (input) => parts.map((p) => (typeof p === 'string' ? p : textOf(p(input)))).join('');
}
