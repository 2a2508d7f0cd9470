// A small PromQL evaluator: exactly the subset deploy/prometheus/alerts.yml uses, with
// Prometheus's semantics for it, so test/metrics/rules.test.ts can evaluate the rules
// against recorded series the way `promtool test rules` would. Anything outside the
// subset throws `unsupported PromQL: …` at parse time: a rule using it fails its test
// loudly instead of being skipped or half-evaluated.
//
// Supported: instant selectors with =, !=, =~, !~ matchers (5 minute lookback, staleness
// markers); range selectors; rate, increase (Prometheus's extrapolation and counter
// resets), time, absent, scalar, clamp_min, histogram_quantile; sum/min/max/avg/count
// with by (…); + - * / and the comparison operators (filtering, no `bool`) between
// scalars and vectors, one-to-one vector matching with or without on (…); and, or,
// unless with or without on (…); unary minus; parentheses.
// Not supported (throws): without, ignoring, group_left/right, bool, offset, @,
// subqueries, % and ^, string literals, any other function or aggregation.

export type Labels = Record<string, string>;

/** A recorded point: a value, or a staleness marker (the series disappeared). */
export interface Point {
  t: number;
  v: number | 'stale';
}

export interface Series {
  labels: Labels;
  points: Point[];
}

interface Sample {
  labels: Labels;
  v: number;
}

type Value =
  | { kind: 'scalar'; v: number }
  | { kind: 'vector'; samples: Sample[] }
  | { kind: 'matrix'; series: Array<{ labels: Labels; points: Array<{ t: number; v: number }> }> };

interface Matcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

type Node =
  | { type: 'number'; v: number }
  | { type: 'selector'; matchers: Matcher[]; rangeMs: number | null }
  | { type: 'call'; fn: string; args: Node[] }
  | { type: 'aggregate'; op: string; by: string[]; expr: Node }
  | { type: 'binary'; op: string; lhs: Node; rhs: Node; on: string[] | null }
  | { type: 'negate'; expr: Node };

/** Prometheus's default lookback: an instant selector sees a sample up to 5 minutes old. */
const LOOKBACK_MS = 5 * 60_000;

const FUNCTIONS = new Set(['rate', 'increase', 'time', 'absent', 'scalar', 'clamp_min', 'histogram_quantile']);
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'count']);
const COMPARISONS = new Set(['==', '!=', '>', '<', '>=', '<=']);
/** Binary operators by precedence, loosest first (Prometheus's order). */
const LEVELS = [['or'], ['and', 'unless'], [...COMPARISONS], ['+', '-'], ['*', '/']];
const UNSUPPORTED_WORDS = new Set(['without', 'ignoring', 'group_left', 'group_right', 'bool', 'offset']);

function unsupported(what: string): never {
  throw new Error(`unsupported PromQL: ${what}`);
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_536_000_000,
};

/** A Prometheus duration (`90s`, `1h30m`) in milliseconds. */
export function durationMs(text: string): number {
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new Error(`bad duration "${text}"`);
  return parts.reduce((ms, p) => ms + Number(p[1]) * (DURATION_UNITS[p[2] ?? ''] ?? NaN), 0);
}

type Token = { kind: 'num' | 'ident' | 'str' | 'op' | 'dur'; text: string };

function lex(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const rest = src.slice(i);
    const space = /^\s+/.exec(rest);
    if (space) {
      i += space[0].length;
      continue;
    }
    if (rest[0] === '#') unsupported('comments');
    let m: RegExpExecArray | null;
    if ((m = /^(?:\d+(?:ms|s|m|h|d|w|y))+(?![a-zA-Z0-9_])/.exec(rest))) tokens.push({ kind: 'dur', text: m[0] });
    else if ((m = /^(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+)(?![a-zA-Z_])/i.exec(rest)))
      tokens.push({ kind: 'num', text: m[0] });
    else if ((m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(rest))) tokens.push({ kind: 'ident', text: m[0] });
    else if ((m = /^"(?:[^"\\]|\\.)*"|^'(?:[^'\\]|\\.)*'/.exec(rest))) tokens.push({ kind: 'str', text: m[0] });
    else if ((m = /^(?:==|!=|=~|!~|>=|<=|[-+*/%^<>=(){}[\],:@])/.exec(rest))) {
      tokens.push({ kind: 'op', text: m[0] });
    } else throw new Error(`PromQL: cannot read "${rest.slice(0, 20)}"`);
    i += m[0].length;
  }
  return tokens;
}

function unquote(text: string): string {
  if (text.startsWith("'")) return text.slice(1, -1).replace(/\\(.)/g, '$1');
  return JSON.parse(text) as string;
}

/** Parses one PromQL expression (the subset above) into a tree. */
export function parse(src: string): Node {
  const tokens = lex(src);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => {
    const t = tokens[pos++];
    if (!t) throw new Error(`PromQL: unexpected end of "${src.trim()}"`);
    return t;
  };
  const expect = (text: string) => {
    const t = next();
    if (t.text !== text) throw new Error(`PromQL: expected "${text}", found "${t.text}" in "${src.trim()}"`);
  };
  const isWord = (t: Token | undefined, ...words: string[]) => t?.kind === 'ident' && words.includes(t.text);

  const labelList = (): string[] => {
    expect('(');
    const names: string[] = [];
    while (peek()?.text !== ')') {
      names.push(next().text);
      if (peek()?.text === ',') next();
    }
    expect(')');
    return names;
  };

  const binary = (level: number): Node => {
    if (level === LEVELS.length) return unary();
    let lhs = binary(level + 1);
    for (;;) {
      const t = peek();
      if (!t || !(LEVELS[level] ?? []).includes(t.text) || (t.kind !== 'op' && t.kind !== 'ident')) {
        if (t && (t.text === '%' || t.text === '^')) unsupported(`the ${t.text} operator`);
        return lhs;
      }
      next();
      if (UNSUPPORTED_WORDS.has(peek()?.text ?? '')) unsupported(`${peek()?.text} on ${t.text}`);
      let on: string[] | null = null;
      if (isWord(peek(), 'on')) {
        next();
        on = labelList();
      }
      if (UNSUPPORTED_WORDS.has(peek()?.text ?? '')) unsupported(`${peek()?.text} on ${t.text}`);
      const rhs = binary(level + 1);
      lhs = { type: 'binary', op: t.text, lhs, rhs, on };
    }
  };

  const unary = (): Node => {
    if (peek()?.text === '-') {
      next();
      return { type: 'negate', expr: unary() };
    }
    if (peek()?.text === '+') next();
    const node = primary();
    const t = peek();
    if (t && (isWord(t, 'offset') || t.text === '@')) unsupported(t.text);
    return node;
  };

  const selector = (name: string | null): Node => {
    const matchers: Matcher[] = name === null ? [] : [{ name: '__name__', op: '=', value: name }];
    if (peek()?.text === '{') {
      next();
      while (peek()?.text !== '}') {
        const label = next().text;
        const op = next().text;
        if (!['=', '!=', '=~', '!~'].includes(op)) throw new Error(`PromQL: bad matcher operator "${op}"`);
        const value = next();
        if (value.kind !== 'str') throw new Error(`PromQL: matcher ${label} needs a string`);
        matchers.push({ name: label, op: op as Matcher['op'], value: unquote(value.text) });
        if (peek()?.text === ',') next();
      }
      expect('}');
    }
    let rangeMs: number | null = null;
    if (peek()?.text === '[') {
      next();
      const range = next();
      if (range.kind !== 'dur') throw new Error(`PromQL: expected a duration in [], found "${range.text}"`);
      rangeMs = durationMs(range.text);
      if (peek()?.text === ':') unsupported('subqueries');
      expect(']');
    }
    return { type: 'selector', matchers, rangeMs };
  };

  const primary = (): Node => {
    const t = next();
    if (t.kind === 'num') return { type: 'number', v: Number(t.text) };
    if (t.kind === 'dur') throw new Error(`PromQL: a duration "${t.text}" outside a range selector`);
    if (t.kind === 'str') unsupported('string literals');
    if (t.text === '(') {
      const inner = binary(0);
      expect(')');
      if (peek()?.text === '[') unsupported('subqueries');
      return inner;
    }
    if (t.text === '{') {
      pos -= 1;
      return selector(null);
    }
    if (t.kind !== 'ident') throw new Error(`PromQL: unexpected "${t.text}" in "${src.trim()}"`);
    if (AGGREGATIONS.has(t.text) && (peek()?.text === '(' || isWord(peek(), 'by', 'without'))) {
      let by: string[] | null = null;
      if (isWord(peek(), 'without')) unsupported('without');
      if (isWord(peek(), 'by')) {
        next();
        by = labelList();
      }
      expect('(');
      const expr = binary(0);
      if (peek()?.text === ',') unsupported(`a parameter to ${t.text}`);
      expect(')');
      if (isWord(peek(), 'without')) unsupported('without');
      if (isWord(peek(), 'by')) {
        if (by) throw new Error('PromQL: by given twice');
        next();
        by = labelList();
      }
      return { type: 'aggregate', op: t.text, by: by ?? [], expr };
    }
    if (peek()?.text === '(') {
      if (!FUNCTIONS.has(t.text)) unsupported(`the ${t.text}() function`);
      next();
      const args: Node[] = [];
      while (peek()?.text !== ')') {
        args.push(binary(0));
        if (peek()?.text === ',') next();
      }
      expect(')');
      return { type: 'call', fn: t.text, args };
    }
    if (UNSUPPORTED_WORDS.has(t.text) || AGGREGATIONS.has(t.text) || t.text === 'on')
      throw new Error(`PromQL: unexpected "${t.text}" in "${src.trim()}"`);
    return selector(t.text);
  };

  const tree = binary(0);
  if (pos !== tokens.length) throw new Error(`PromQL: unexpected "${tokens[pos]?.text}" in "${src.trim()}"`);
  return tree;
}

function matches(labels: Labels, m: Matcher): boolean {
  const v = labels[m.name] ?? '';
  switch (m.op) {
    case '=':
      return v === m.value;
    case '!=':
      return v !== m.value;
    case '=~':
      return new RegExp(`^(?:${m.value})$`).test(v);
    case '!~':
      return !new RegExp(`^(?:${m.value})$`).test(v);
  }
}

const withoutName = (labels: Labels): Labels => {
  const { __name__: _, ...rest } = labels;
  return rest;
};
const key = (labels: Labels) =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([, v]) => v !== '')
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
/** The labels two sides match on: the `on` list, or every label but the name. */
const signature = (labels: Labels, on: string[] | null) =>
  key(on ? Object.fromEntries(on.map((l) => [l, labels[l] ?? ''])) : withoutName(labels));

function arithmetic(op: string, a: number, b: number): number {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
  }
  return unsupported(`the ${op} operator`);
}

function compare(op: string, a: number, b: number): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '>':
      return a > b;
    case '<':
      return a < b;
    case '>=':
      return a >= b;
    case '<=':
      return a <= b;
  }
  return unsupported(`the ${op} operator`);
}

/**
 * rate() and increase() as Prometheus computes them (its
 * extrapolatedRate): the counter's rise across the window's samples, resets added back,
 * extrapolated toward the window's edges (not past half a sample interval, nor below zero).
 */
function extrapolatedRate(points: Array<{ t: number; v: number }>, start: number, end: number, isRate: boolean) {
  if (points.length < 2) return null;
  const first = points[0] as { t: number; v: number };
  const last = points[points.length - 1] as { t: number; v: number };
  let result = last.v - first.v;
  let prev = first.v;
  for (const p of points.slice(1)) {
    if (p.v < prev) result += prev;
    prev = p.v;
  }
  let toStart = (first.t - start) / 1000;
  const toEnd = (end - last.t) / 1000;
  const sampled = (last.t - first.t) / 1000;
  const average = sampled / (points.length - 1);
  if (result > 0 && first.v >= 0) toStart = Math.min(toStart, sampled * (first.v / result));
  const threshold = average * 1.1;
  let extrapolateTo = sampled;
  extrapolateTo += toStart < threshold ? toStart : average / 2;
  extrapolateTo += toEnd < threshold ? toEnd : average / 2;
  result *= extrapolateTo / sampled;
  return isRate ? result / ((end - start) / 1000) : result;
}

/** histogram_quantile over one series' buckets, as Prometheus's bucketQuantile computes it. */
function bucketQuantile(q: number, buckets: Array<{ le: number; count: number }>): number {
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  buckets.sort((a, b) => a.le - b.le);
  if (buckets.length < 2 || buckets[buckets.length - 1]?.le !== Infinity) return NaN;
  for (let i = 1; i < buckets.length; i++) {
    const b = buckets[i] as { count: number };
    b.count = Math.max(b.count, (buckets[i - 1] as { count: number }).count);
  }
  const observations = (buckets[buckets.length - 1] as { count: number }).count;
  if (observations === 0) return NaN;
  let rank = q * observations;
  const b = buckets.findIndex((x) => x.count >= rank);
  if (b === buckets.length - 1) return (buckets[b - 1] as { le: number }).le;
  const bucket = buckets[b] as { le: number; count: number };
  if (b === 0 && bucket.le <= 0) return bucket.le;
  let start = 0;
  let count = bucket.count;
  if (b > 0) {
    const below = buckets[b - 1] as { le: number; count: number };
    start = below.le;
    count -= below.count;
    rank -= below.count;
  }
  return start + (bucket.le - start) * (rank / count);
}

function vector(v: Value, what: string): Sample[] {
  if (v.kind !== 'vector') throw new Error(`PromQL: ${what} needs an instant vector, got a ${v.kind}`);
  return v.samples;
}

function scalarOf(v: Value, what: string): number {
  if (v.kind !== 'scalar') throw new Error(`PromQL: ${what} needs a scalar, got a ${v.kind}`);
  return v.v;
}

/** Evaluates a parsed expression at `t` (ms) over the recorded series. */
export function evaluate(node: Node, series: Series[], t: number): Value {
  const ev = (n: Node) => evaluate(n, series, t);
  switch (node.type) {
    case 'number':
      return { kind: 'scalar', v: node.v };
    case 'negate': {
      const v = ev(node.expr);
      if (v.kind === 'scalar') return { kind: 'scalar', v: -v.v };
      return {
        kind: 'vector',
        samples: vector(v, 'unary minus').map((s) => ({ labels: withoutName(s.labels), v: -s.v })),
      };
    }
    case 'selector': {
      const chosen = series.filter((s) => node.matchers.every((m) => matches(s.labels, m)));
      if (node.rangeMs !== null) {
        const start = t - node.rangeMs;
        return {
          kind: 'matrix',
          series: chosen
            .map((s) => ({
              labels: s.labels,
              points: s.points.filter((p): p is { t: number; v: number } => p.t > start && p.t <= t && p.v !== 'stale'),
            }))
            .filter((s) => s.points.length > 0),
        };
      }
      const samples: Sample[] = [];
      for (const s of chosen) {
        const latest = s.points.filter((p) => p.t <= t && p.t > t - LOOKBACK_MS).pop();
        if (latest && latest.v !== 'stale') samples.push({ labels: s.labels, v: latest.v });
      }
      return { kind: 'vector', samples };
    }
    case 'call':
      return call(node, ev, t);
    case 'aggregate': {
      const groups = new Map<string, { labels: Labels; values: number[] }>();
      for (const s of vector(ev(node.expr), node.op)) {
        const labels = Object.fromEntries(
          node.by.filter((l) => (s.labels[l] ?? '') !== '').map((l) => [l, s.labels[l] as string]),
        );
        const group = groups.get(key(labels)) ?? { labels, values: [] };
        group.values.push(s.v);
        groups.set(key(labels), group);
      }
      const reduce: Record<string, (xs: number[]) => number> = {
        sum: (xs) => xs.reduce((a, b) => a + b, 0),
        count: (xs) => xs.length,
        avg: (xs) => xs.reduce((a, b) => a + b, 0) / xs.length,
        // Prometheus's max and min skip NaN unless every value is NaN.
        max: (xs) => (xs.every(Number.isNaN) ? NaN : Math.max(...xs.filter((x) => !Number.isNaN(x)))),
        min: (xs) => (xs.every(Number.isNaN) ? NaN : Math.min(...xs.filter((x) => !Number.isNaN(x)))),
      };
      const fn = reduce[node.op] ?? unsupported(`the ${node.op} aggregation`);
      return { kind: 'vector', samples: [...groups.values()].map((g) => ({ labels: g.labels, v: fn(g.values) })) };
    }
    case 'binary':
      return binop(node.op, ev(node.lhs), ev(node.rhs), node.on);
  }
}

function call(node: Extract<Node, { type: 'call' }>, ev: (n: Node) => Value, t: number): Value {
  const arity: Record<string, number> = {
    time: 0,
    rate: 1,
    increase: 1,
    absent: 1,
    scalar: 1,
    clamp_min: 2,
    histogram_quantile: 2,
  };
  if (node.args.length !== arity[node.fn]) throw new Error(`PromQL: ${node.fn}() takes ${arity[node.fn]} arguments`);
  const [a, b] = node.args as [Node, Node];
  switch (node.fn) {
    case 'time':
      return { kind: 'scalar', v: t / 1000 };
    case 'rate':
    case 'increase': {
      if (a.type !== 'selector' || a.rangeMs === null) throw new Error(`PromQL: ${node.fn}() needs a range selector`);
      const m = ev(a);
      if (m.kind !== 'matrix') throw new Error(`PromQL: ${node.fn}() needs a range vector`);
      const samples: Sample[] = [];
      for (const s of m.series) {
        const v = extrapolatedRate(s.points, t - a.rangeMs, t, node.fn === 'rate');
        if (v !== null) samples.push({ labels: withoutName(s.labels), v });
      }
      return { kind: 'vector', samples };
    }
    case 'absent': {
      if (vector(ev(a), 'absent()').length > 0) return { kind: 'vector', samples: [] };
      // Labels from the selector's equality matchers, as Prometheus derives them.
      const labels: Labels = {};
      if (a.type === 'selector')
        for (const m of a.matchers) if (m.op === '=' && m.name !== '__name__') labels[m.name] = m.value;
      return { kind: 'vector', samples: [{ labels, v: 1 }] };
    }
    case 'scalar': {
      const samples = vector(ev(a), 'scalar()');
      return { kind: 'scalar', v: samples.length === 1 ? (samples[0] as Sample).v : NaN };
    }
    case 'clamp_min': {
      const min = scalarOf(ev(b), 'clamp_min()');
      return {
        kind: 'vector',
        samples: vector(ev(a), 'clamp_min()').map((s) => ({ labels: withoutName(s.labels), v: Math.max(s.v, min) })),
      };
    }
    case 'histogram_quantile': {
      const q = scalarOf(ev(a), 'histogram_quantile()');
      const groups = new Map<string, { labels: Labels; buckets: Array<{ le: number; count: number }> }>();
      for (const s of vector(ev(b), 'histogram_quantile()')) {
        const { le, ...rest } = withoutName(s.labels);
        if (le === undefined) continue;
        const group = groups.get(key(rest)) ?? { labels: rest, buckets: [] };
        group.buckets.push({ le: le === '+Inf' ? Infinity : Number(le), count: s.v });
        groups.set(key(rest), group);
      }
      return {
        kind: 'vector',
        samples: [...groups.values()].map((g) => ({ labels: g.labels, v: bucketQuantile(q, g.buckets) })),
      };
    }
  }
  return unsupported(`the ${node.fn}() function`);
}

function binop(op: string, lhs: Value, rhs: Value, on: string[] | null): Value {
  const comparison = COMPARISONS.has(op);
  const setOp = ['and', 'or', 'unless'].includes(op);
  if (lhs.kind === 'matrix' || rhs.kind === 'matrix') throw new Error(`PromQL: ${op} on a range vector`);
  if (lhs.kind === 'scalar' && rhs.kind === 'scalar') {
    if (comparison) unsupported('a comparison between scalars (needs bool)');
    if (setOp) throw new Error(`PromQL: ${op} needs vectors`);
    return { kind: 'scalar', v: arithmetic(op, lhs.v, rhs.v) };
  }
  if (lhs.kind === 'scalar' || rhs.kind === 'scalar') {
    if (setOp) throw new Error(`PromQL: ${op} needs vectors`);
    if (on) throw new Error('PromQL: on (…) between a vector and a scalar');
    const swap = lhs.kind === 'scalar';
    const samples = swap ? vector(rhs, op) : vector(lhs, op);
    const k = swap ? scalarOf(lhs, op) : scalarOf(rhs, op);
    const out: Sample[] = [];
    for (const s of samples) {
      const [a, b] = swap ? [k, s.v] : [s.v, k];
      // A comparison keeps the vector's sample (its value too) when it holds.
      if (comparison) {
        if (compare(op, a, b)) out.push(s);
      } else out.push({ labels: withoutName(s.labels), v: arithmetic(op, a, b) });
    }
    return { kind: 'vector', samples: out };
  }
  const left = lhs.samples;
  const right = rhs.samples;
  const rightSigs = new Set(right.map((s) => signature(s.labels, on)));
  if (op === 'and') return { kind: 'vector', samples: left.filter((s) => rightSigs.has(signature(s.labels, on))) };
  if (op === 'unless') return { kind: 'vector', samples: left.filter((s) => !rightSigs.has(signature(s.labels, on))) };
  if (op === 'or') {
    const leftSigs = new Set(left.map((s) => signature(s.labels, on)));
    return { kind: 'vector', samples: [...left, ...right.filter((s) => !leftSigs.has(signature(s.labels, on)))] };
  }
  // One-to-one matching: a duplicate on either side is an error, as in Prometheus.
  const bySig = new Map<string, Sample>();
  for (const s of right) {
    const sig = signature(s.labels, on);
    if (bySig.has(sig)) throw new Error(`PromQL: many-to-many matching for ${op}: duplicate series on the right`);
    bySig.set(sig, s);
  }
  const out: Sample[] = [];
  const seen = new Set<string>();
  for (const s of left) {
    const match = bySig.get(signature(s.labels, on));
    if (!match) continue;
    let labels = comparison ? s.labels : withoutName(s.labels);
    if (on)
      labels = Object.fromEntries(on.filter((l) => (labels[l] ?? '') !== '').map((l) => [l, labels[l] as string]));
    if (comparison && !compare(op, s.v, match.v)) continue;
    const k = key(labels);
    if (seen.has(k)) throw new Error(`PromQL: multiple matches for labels ${k} in ${op}`);
    seen.add(k);
    out.push({ labels, v: comparison ? s.v : arithmetic(op, s.v, match.v) });
  }
  return { kind: 'vector', samples: out };
}
