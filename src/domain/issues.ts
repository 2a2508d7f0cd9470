// Zod 4 answering as zod 3 did. Every surface answers a bad field as `field: message`
// (parseInput in todo.ts, the configuration's problem list), and agents, scripts and
// people act on those texts; zod 4 rewrote its default messages ("Required" became
// "Invalid input: expected string, received undefined"), so the parses pass `zod3Messages`
// as their error map and keep the texts the surfaces have always answered. A schema's own
// message (`.min(1, 'must not be empty')`) still wins over the map, as it did.
//
// Where zod 4 also changed what it accepts, the schemas use the rules here instead:
// string lengths in UTF-16 code units (minLength, maxLength; zod 4 counts code points),
// zod 3's RFC 3339 date-times (dateTime), ±Infinity answered by the field's first failing
// check (zod 4 refuses it as a type), and no issue for a whole number beyond 2^53 that
// zod 3 did not raise (firstIssue). test/domain/issues.test.ts pins them. Pure.

import { z } from 'zod';

/** zod 3's name for the type of a value ("received …"). */
function receivedType(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return Number.isNaN(value) ? 'nan' : 'number';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return 'array';
      const thenable = value as { then?: unknown; catch?: unknown };
      if (typeof thenable.then === 'function' && typeof thenable.catch === 'function') return 'promise';
      if (value instanceof Map) return 'map';
      if (value instanceof Set) return 'set';
      if (value instanceof Date) return 'date';
      return 'object';
    }
    default:
      return typeof value;
  }
}

/** zod 3's list of allowed values: `'a' | 'b'`, strings quoted. */
function joinValues(values: readonly unknown[], separator = ' | '): string {
  return values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(separator);
}

interface Size {
  origin: string;
  inclusive?: boolean;
  exact?: boolean;
}

/** zod 3's too_small, by the kind of value. */
function tooSmall({ origin, inclusive, exact }: Size, minimum: unknown): string {
  const n = String(minimum);
  if (origin === 'array')
    return `Array must contain ${exact ? 'exactly' : inclusive ? 'at least' : 'more than'} ${n} element(s)`;
  if (origin === 'string')
    return `String must contain ${exact ? 'exactly' : inclusive ? 'at least' : 'over'} ${n} character(s)`;
  if (origin === 'number' || origin === 'int' || origin === 'bigint') {
    return `Number must be ${exact ? 'exactly equal to ' : inclusive ? 'greater than or equal to ' : 'greater than '}${n}`;
  }
  return 'Invalid input';
}

/** zod 3's too_big, by the kind of value. */
function tooBig({ origin, inclusive, exact }: Size, maximum: unknown): string {
  const n = String(maximum);
  const than = exact ? 'exactly' : inclusive ? 'less than or equal to' : 'less than';
  if (origin === 'array')
    return `Array must contain ${exact ? 'exactly' : inclusive ? 'at most' : 'less than'} ${n} element(s)`;
  if (origin === 'string')
    return `String must contain ${exact ? 'exactly' : inclusive ? 'at most' : 'under'} ${n} character(s)`;
  if (origin === 'number' || origin === 'int') return `Number must be ${than} ${n}`;
  if (origin === 'bigint') return `BigInt must be ${than} ${n}`;
  return 'Invalid input';
}

function formatMessage(issue: { format: string; prefix?: unknown; suffix?: unknown; includes?: unknown }): string {
  switch (issue.format) {
    case 'regex':
      return 'Invalid';
    case 'starts_with':
      return `Invalid input: must start with "${String(issue.prefix)}"`;
    case 'ends_with':
      return `Invalid input: must end with "${String(issue.suffix)}"`;
    case 'includes':
      return `Invalid input: must include "${String(issue.includes)}"`;
    case 'ipv4':
    case 'ipv6':
      return 'Invalid ip';
    case 'cidrv4':
    case 'cidrv6':
      return 'Invalid cidr';
    default:
      return `Invalid ${issue.format}`;
  }
}

/** The message a check's own error gives this issue, else zod 3's. */
function messageOf(check: z.core.$ZodCheck<unknown>, issue: z.core.$ZodRawIssue): string | undefined {
  const own = (check._zod.def.error as z.core.$ZodErrorMap | undefined)?.(issue);
  const text = typeof own === 'string' ? own : own?.message;
  return text ?? wordOf(zod3Messages(issue));
}

const wordOf = (answer: ReturnType<z.core.$ZodErrorMap>) => (typeof answer === 'string' ? answer : answer?.message);

/**
 * zod 3 took ±Infinity (what JSON's 1e400 parses to) as a number, so the field answered
 * with the first of its checks the value fails (`.int()`: "Expected integer, received
 * float"); zod 4 refuses it as a type before any check. The schema's checks run on it in
 * order to find that first failure. Undefined: zod 3 would have taken it (no schema here
 * takes a bare number; clock_in's `for` turns ±Infinity into a finite number first).
 */
function nonFiniteMessage(issue: z.core.$ZodRawIssue): string | undefined {
  const def = issue.inst?._zod.def;
  const checks = def && 'checks' in def ? (def.checks ?? []) : [];
  for (const check of checks as z.core.$ZodCheck<unknown>[]) {
    const payload: z.core.ParsePayload = { value: issue.input, issues: [] };
    void check._zod.check(payload);
    const failed = payload.issues[0];
    if (failed) return messageOf(check, failed);
  }
  return undefined;
}

/**
 * The error map that words zod 4 issues as zod 3 did (zod 3's `en` locale). Undefined
 * leaves an issue zod 3 had no counterpart for to zod 4's own wording.
 */
export const zod3Messages: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'Required';
      if (issue.expected === 'number' && typeof issue.input === 'number' && !Number.isNaN(issue.input)) {
        return nonFiniteMessage(issue);
      }
      // zod 4 checks `.int()` as a format of a number; zod 3 as a type.
      if (issue.expected === 'int') return 'Expected integer, received float';
      return `Expected ${issue.expected}, received ${receivedType(issue.input)}`;
    case 'invalid_value': {
      // The literal or enum schema that refused the value.
      const type = issue.schema?._zod.def.type;
      if (type === 'literal') return `Invalid literal value, expected ${JSON.stringify(issue.values[0])}`;
      if (issue.input === undefined) return 'Required';
      if (typeof issue.input !== 'string') {
        return `Expected ${joinValues(issue.values)}, received ${receivedType(issue.input)}`;
      }
      return `Invalid enum value. Expected ${joinValues(issue.values)}, received '${issue.input}'`;
    }
    case 'unrecognized_keys':
      return `Unrecognized key(s) in object: ${joinValues(issue.keys, ', ')}`;
    case 'invalid_union':
      return 'Invalid input';
    case 'invalid_format':
      return formatMessage(issue);
    case 'too_small':
      return tooSmall(issue, issue.minimum);
    case 'too_big':
      return tooBig(issue, issue.maximum);
    case 'not_multiple_of':
      return `Number must be a multiple of ${issue.divisor}`;
    case 'custom':
      return 'Invalid input';
    default:
      return undefined;
  }
};

/**
 * Whether zod 3 would have raised this issue at all. Zod 4's `.int()` also refuses
 * integers beyond ±2^53 (origin `int`); every whole number these schemas take is bounded
 * far below that by a check of its own, which zod 3 reported, and which follows.
 */
export function zod3Raises(issue: z.core.$ZodIssue): boolean {
  return !((issue.code === 'too_big' || issue.code === 'too_small') && issue.origin === 'int');
}

/** The first issue zod 3 would have reported (zod 4's own first one when there is none). */
export function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  return issues.find(zod3Raises) ?? issues[0];
}

// zod 3's `.datetime({ offset: true })`: a valid calendar date (leap years included), the
// time with optional seconds and fraction, and `Z` or an offset with or without its colon.
// Zod 4's is stricter (seconds and a colon required, offsets within ±23:59); times the
// surfaces took before are taken still.
const DATE = String.raw`((\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|(0[469]|11)-(0[1-9]|[12]\d|30)|(02)-(0[1-9]|1\d|2[0-8])))`;
const TIME = String.raw`([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?`;
const RFC3339 = new RegExp(String.raw`^${DATE}T${TIME}(Z|([+-]\d{2}:?\d{2}))$`);

/** An RFC 3339 date-time with a zone, as zod 3 checked it; `message` as zod 3 worded it by default. */
export function dateTime(message = 'Invalid datetime') {
  return z.string().regex(RFC3339, message);
}

type StringCheck = (payload: z.core.ParsePayload<string>) => void;

/**
 * zod 3's `.min(n)` on a string: at least n UTF-16 code units. Zod 4's counts code points
 * (an emoji is one, not two), which would take strings zod 3 refused. `.min(1)` is the same
 * either way: any non-empty string is long enough.
 */
export function minLength(min: number, message?: string): StringCheck {
  return (payload) => {
    if (payload.value.length >= min) return;
    payload.issues.push({
      code: 'too_small',
      origin: 'string',
      minimum: min,
      inclusive: true,
      input: payload.value,
      continue: true,
      ...(message === undefined ? {} : { message }),
    });
  };
}

/** zod 3's `.max(n)` on a string: at most n UTF-16 code units (see minLength). */
export function maxLength(max: number, message?: string): StringCheck {
  return (payload) => {
    if (payload.value.length <= max) return;
    payload.issues.push({
      code: 'too_big',
      origin: 'string',
      maximum: max,
      inclusive: true,
      input: payload.value,
      continue: true,
      ...(message === undefined ? {} : { message }),
    });
  };
}
