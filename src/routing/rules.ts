// Routing rules (docs/design/routing.md): a webhook's ordered list of {id, name, when,
// then}, first match wins, and the action when none matches. What is saved is checked
// and compiled here (errors name `rules[i].when` or `rules[i].then.title` and the
// position); what a delivery does is decided here too, as a pure function of the compiled
// rules and the event: route (to which endpoints, queue, with which title…), drop,
// quarantine, or fault — a rule that errors at delivery fails closed. The trust gate comes
// after the rules: what a rule would route, an untrusted actor's event is quarantined instead.

import type { z } from 'zod';
import { invalidArgument } from '../domain/errors.js';
import { routeThen, type Rule, type RuleDefault } from '../domain/routing.js';
import { LIMITS, PRIORITY_BOUNDS } from '../domain/todo.js';
import { compile, compileTemplate, textOf, type Program, type RuleInput, type Template } from './cel.js';

export interface RoutingLimits {
  /** Rules one webhook holds (SWITCHBOARD_RULES_MAX). */
  rulesMax: number;
  /** Characters in one expression or template (SWITCHBOARD_RULE_EXPRESSION_MAX). */
  expressionMax: number;
  /** Milliseconds one delivery's rules may take before the event faults (SWITCHBOARD_RULE_EVAL_BUDGET). */
  evalBudgetMs: number;
  /** Endpoints one route may name (SWITCHBOARD_FANOUT_MAX). */
  fanoutMax: number;
}

export const DEFAULT_ROUTING_LIMITS: RoutingLimits = {
  rulesMax: 32,
  expressionMax: 1024,
  evalBudgetMs: 50,
  fanoutMax: 8,
};

/** What a webhook routes by: its rules, its default, and its trust gate. */
export interface RoutingConfig {
  rules: Rule[];
  default: RuleDefault;
  /** Null: no trust gate (every actor trusted). */
  trustedActors: string[] | null;
  /** A CEL expression trusting an actor the list does not name; null: none. */
  trustWhen: string | null;
}

interface CompiledRoute {
  queue: string | undefined;
  endpoints: string[] | undefined;
  title: Template | undefined;
  kind: Template | undefined;
  priority: number | Program | undefined;
  notBefore: Program | undefined;
  idempotencyKey: Template | undefined;
  once: Program | undefined;
}

interface CompiledRule {
  id: string;
  name: string;
  when: Program;
  then: { action: 'drop' | 'quarantine'; reason: string | undefined } | ({ action: 'route' } & CompiledRoute);
}

export interface CompiledRouting {
  rules: CompiledRule[];
  default: RuleDefault;
  trustedActors: Set<string> | null;
  trustWhen: Program | null;
}

function compileRoute(t: z.infer<typeof routeThen>, at: string, limits: RoutingLimits): CompiledRoute {
  const cel = { expressionMax: limits.expressionMax };
  if (t.endpoints && t.endpoints.length > limits.fanoutMax) {
    throw invalidArgument(`${at}.endpoints`, `must name at most ${limits.fanoutMax} endpoints`);
  }
  const template = (text: string | undefined, field: string) =>
    text === undefined ? undefined : compileTemplate(text, `${at}.${field}`, cel);
  return {
    queue: t.queue,
    endpoints: t.endpoints,
    title: template(t.title, 'title'),
    kind: template(t.kind, 'kind'),
    priority:
      typeof t.priority === 'string'
        ? compile(t.priority, `${at}.priority`, cel, ['int', 'uint', 'double'])
        : t.priority,
    notBefore:
      t.not_before === undefined
        ? undefined
        : compile(t.not_before, `${at}.not_before`, cel, ['google.protobuf.Timestamp', 'string']),
    idempotencyKey: template(t.idempotency_key, 'idempotency_key'),
    once: t.once === undefined ? undefined : compile(t.once, `${at}.once`, cel, ['string', 'int', 'uint', 'double']),
  };
}

/** Compiles a webhook's routing; throws invalid_argument naming the rule's field (`rules[i].when`) and position. */
export function compileRouting(config: RoutingConfig, limits: RoutingLimits): CompiledRouting {
  if (config.rules.length > limits.rulesMax) {
    throw invalidArgument('rules', `must hold at most ${limits.rulesMax} rules`);
  }
  const cel = { expressionMax: limits.expressionMax };
  const rules = config.rules.map((r, i): CompiledRule => {
    const at = `rules[${i}]`;
    const when = compile(r.when, `${at}.when`, cel, ['bool']);
    const then =
      r.then.action === 'route'
        ? { action: 'route' as const, ...compileRoute(r.then, `${at}.then`, limits) }
        : { action: r.then.action, reason: r.then.reason };
    return { id: r.id, name: r.name, when, then };
  });
  return {
    rules,
    default: config.default,
    trustedActors: config.trustedActors === null ? null : new Set(config.trustedActors),
    trustWhen: config.trustWhen === null ? null : compile(config.trustWhen, 'when', cel, ['bool']),
  };
}

const compiledCache = new Map<string, CompiledRouting>();
const CACHE_MAX = 1000;

/**
 * The compiled form of a stored routing config, cached by its text: a delivery compiles
 * nothing unless the rules changed since the last one (the 32-rule bench depends on it).
 */
export function compiledFor(config: RoutingConfig, limits: RoutingLimits): CompiledRouting {
  const key = JSON.stringify([config, limits.expressionMax, limits.fanoutMax, limits.rulesMax]);
  const hit = compiledCache.get(key);
  if (hit) return hit;
  const compiled = compileRouting(config, limits);
  if (compiledCache.size >= CACHE_MAX) {
    const oldest = compiledCache.keys().next().value;
    if (oldest !== undefined) compiledCache.delete(oldest);
  }
  compiledCache.set(key, compiled);
  return compiled;
}

/** One todo routing would make. `endpoint` null: the webhook's own endpoint. */
export interface Target {
  endpoint: string | null;
  queue: string;
  title: string;
  kind: string | null;
  priority?: number;
  not_before?: string;
  idempotency_key?: string;
}

/** The rule that decided (`default` when none matched). */
export interface RuleRef {
  id: string;
  name: string;
}

/** One step of a routing trace (docs/design/routing.md, "The trace"). */
export type TraceStep = Record<string, unknown> & { step: string };

export type Decision =
  | { disposition: 'routed'; rule: RuleRef; targets: Target[]; once: string | null; trace: TraceStep[] }
  | {
      disposition: 'quarantined';
      rule: RuleRef;
      reason: string;
      targets: Target[];
      once: string | null;
      trace: TraceStep[];
    }
  | { disposition: 'dropped'; rule: RuleRef; reason: string; trace: TraceStep[] }
  | { disposition: 'faulted'; rule: RuleRef; field: string; error: string; trace: TraceStep[] };

/** What the provider's reading gives a todo when a route says nothing else. */
export interface Base {
  queue: string;
  title: string;
  kind: string | null;
  priority: number | undefined;
}

class Fault extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function run<T>(field: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof Fault) throw err;
    const text = err instanceof Error ? err.message : String(err);
    throw new Fault(field, text.split('\n')[0]?.trim() ?? text);
  }
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function priorityOf(value: unknown, field: string): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < PRIORITY_BOUNDS.min || n > PRIORITY_BOUNDS.max) {
    throw new Fault(
      field,
      `gave ${textOf(value)}, not an integer from ${PRIORITY_BOUNDS.min} to ${PRIORITY_BOUNDS.max}`,
    );
  }
  return n;
}

function instantOf(value: unknown, field: string): string {
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) throw new Fault(field, `gave ${textOf(value)}, not a timestamp`);
  return date.toISOString();
}

function targetsOf(
  route: CompiledRoute,
  at: string,
  input: RuleInput,
  base: Base,
): { targets: Target[]; once: string | null; values: Record<string, unknown> } {
  const title = route.title
    ? clip(
        run(`${at}.title`, () => route.title!(input)),
        LIMITS.titleChars,
      )
    : base.title;
  const kind = route.kind
    ? clip(
        run(`${at}.kind`, () => route.kind!(input)),
        LIMITS.kindChars,
      ) || null
    : base.kind;
  const priority =
    typeof route.priority === 'function'
      ? priorityOf(
          run(`${at}.priority`, () => (route.priority as Program)(input)),
          `${at}.priority`,
        )
      : (route.priority ?? base.priority);
  const notBefore = route.notBefore
    ? instantOf(
        run(`${at}.not_before`, () => route.notBefore!(input)),
        `${at}.not_before`,
      )
    : undefined;
  const key = route.idempotencyKey
    ? clip(
        run(`${at}.idempotency_key`, () => route.idempotencyKey!(input)),
        LIMITS.idempotencyKeyChars,
      )
    : undefined;
  const once = route.once ? textOf(run(`${at}.once`, () => route.once!(input))).slice(0, 200) : null;
  if (title === '') throw new Fault(`${at}.title`, 'gave an empty title');
  if (once === '') throw new Fault(`${at}.once`, 'gave an empty key');
  const queue = route.queue ?? base.queue;
  const one = {
    queue,
    title,
    kind,
    ...(priority === undefined ? {} : { priority }),
    ...(notBefore === undefined ? {} : { not_before: notBefore }),
    ...(key ? { idempotency_key: key } : {}),
  };
  const targets = (route.endpoints ?? [null]).map((endpoint) => ({ endpoint, ...one }));
  const values = { ...one, endpoints: route.endpoints ?? null, ...(once === null ? {} : { once }) };
  return { targets, once, values };
}

function trusted(c: CompiledRouting, input: RuleInput): { trusted: boolean; by: string } {
  if (c.trustedActors === null) return { trusted: true, by: 'no_gate' };
  if (input.event.actor !== '' && c.trustedActors.has(input.event.actor)) return { trusted: true, by: 'list' };
  if (c.trustWhen && run('trusted_actors.when', () => c.trustWhen!(input)) === true) {
    return { trusted: true, by: 'when' };
  }
  return { trusted: false, by: 'none' };
}

const DEFAULT_RULE: RuleRef = { id: 'default', name: 'default' };

/**
 * What one event does. Rules run in order; the first whose `when` is true decides. Every
 * rule's `when` that ran is in the trace; an expression that errors, a value of the wrong
 * kind, or rules past the time budget fault the event (nothing is made). `asTrusted`
 * skips the trust gate: a human released the event from quarantine.
 */
export function decide(
  c: CompiledRouting,
  input: RuleInput,
  base: Base,
  limits: Pick<RoutingLimits, 'evalBudgetMs'>,
  opts: { asTrusted?: boolean; clock?: () => number } = {},
): Decision {
  const clock = opts.clock ?? (() => performance.now());
  const started = clock();
  const trace: TraceStep[] = [];
  let rule: RuleRef = DEFAULT_RULE;
  try {
    let matched: CompiledRule | null = null;
    for (const [i, r] of c.rules.entries()) {
      const field = `rules[${i}].when`;
      rule = { id: r.id, name: r.name };
      const value = run(field, () => r.when(input));
      if (typeof value !== 'boolean') throw new Fault(field, `gave ${textOf(value)}, not a bool`);
      if (clock() - started > limits.evalBudgetMs) {
        throw new Fault(field, `rules took more than the ${limits.evalBudgetMs} ms budget`);
      }
      trace.push({ step: 'rule', rule_id: r.id, name: r.name, position: i, matched: value });
      if (value) {
        matched = r;
        break;
      }
    }
    if (matched === null) rule = DEFAULT_RULE;
    let routed: { targets: Target[]; once: string | null; values: Record<string, unknown> };
    if (matched === null) {
      if (c.default === 'drop') {
        trace.push({ step: 'decide', rule: 'default', action: 'drop', reason: 'no rule matched' });
        return { disposition: 'dropped', rule, reason: 'no rule matched', trace };
      }
      const { priority, ...rest } = base;
      const target: Target = { endpoint: null, ...rest, ...(priority === undefined ? {} : { priority }) };
      routed = { targets: [target], once: null, values: { queue: base.queue, title: base.title, kind: base.kind } };
    } else if (matched.then.action === 'route') {
      const at = `rules[${c.rules.indexOf(matched)}].then`;
      routed = targetsOf(matched.then, at, input, base);
    } else {
      const action = matched.then.action;
      const why = matched.then.reason ?? (action === 'drop' ? 'dropped by rule' : 'quarantined by rule');
      trace.push({ step: 'decide', rule: rule.id, action, reason: why });
      if (action === 'drop') return { disposition: 'dropped', rule, reason: why, trace };
      const target = { endpoint: null, queue: base.queue, title: base.title, kind: base.kind };
      return { disposition: 'quarantined', rule, reason: why, targets: [target], once: null, trace };
    }
    trace.push({ step: 'decide', rule: rule.id, action: 'route', values: routed.values });
    if (!opts.asTrusted) {
      const t = trusted(c, input);
      if (c.trustedActors !== null) trace.push({ step: 'trust', actor: input.event.actor || null, ...t });
      if (!t.trusted) {
        const why = input.event.actor ? `actor "${input.event.actor}" is not trusted` : 'the event names no actor';
        return { disposition: 'quarantined', rule, reason: why, targets: routed.targets, once: routed.once, trace };
      }
    }
    return { disposition: 'routed', rule, targets: routed.targets, once: routed.once, trace };
  } catch (err) {
    if (!(err instanceof Fault)) throw err;
    trace.push({ step: 'fault', rule: rule.id, field: err.field, error: err.message });
    return { disposition: 'faulted', rule, field: err.field, error: err.message, trace };
  }
}
