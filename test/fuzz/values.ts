// Input generation for the fuzzers: valid values from a JSON Schema (the MCP verbs' own
// schemas, as tools/list shows them) or from a seed value (REST bodies, /ws payloads),
// then mutated: fields dropped, added, retyped; hostile strings and numbers; ids of other
// tenants and of other kinds; non-objects; deep nesting and duplicate keys (raw JSON).

import type { Rng } from './rng.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A request body: a value sent as JSON, or raw text/bytes sent as they are. */
export type Body = { kind: 'json'; value: unknown } | { kind: 'raw'; text: string | Buffer } | { kind: 'none' };

/** The JSON Schema subset zod's toJSONSchema produces for the verb inputs. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  additionalProperties?: unknown;
}

/** Values that are realistic for a field of this name (ids from the run's pools, queue names…). */
export type FieldHint = (field: string, rng: Rng) => unknown;

const DEEP = '@@fuzz-deep@@';

export function hostileString(rng: Rng): string {
  return rng.weighted<() => string>([
    [3, () => ''],
    [2, () => ' \t\n '],
    [3, () => 'a'.repeat(rng.pick([63, 64, 65, 81, 101, 201, 255, 2049, 16_385, 65_537]))],
    [1, () => '€'.repeat(rng.pick([100, 5_462, 21_846]))],
    [1, () => 'x'.repeat(rng.pick([262_145, 300_000]))],
    [3, () => rng.pick(['\u0000', 'a\u0000b', '\u0000td_x', '%00', 'td_\u0000'])],
    [
      2,
      () => rng.pick(['🚀🔥', 'ž漢字', '\u202eevil', '\uFEFF', '\uD800', 'e\u0301', '\u2028\u2029', 'Ω'.repeat(300)]),
    ],
    [2, () => rng.pick(['NaN', 'Infinity', '-Infinity', '1e309', '-1', '0x10', '007', '1.5', ' 42 ', '4e1'])],
    [1, () => rng.pick(['null', 'true', '[]', '{}', '"', '\\', '\\u0000'])],
    [
      2,
      () => rng.pick(["'; DROP TABLE todos; --", '%', '%zz', '../../etc/passwd', '<script>alert(1)</script>', '${x}']),
    ],
    [
      2,
      () =>
        rng.pick([
          'td_',
          'ep_',
          'sbk_x',
          'sbt_x',
          'hu_x',
          'nh_x',
          'dt_x',
          'rg_x',
          'ms_x',
          'td_01JZZZZZZZZZZZZZZZZZZZZZZZ',
        ]),
    ],
    [1, () => rng.pick(['00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', 'not-a-uuid'])],
    [
      2,
      () =>
        rng.pick([
          '2026-13-45T25:61:61Z',
          '9999-12-31T23:59:59Z',
          '0000-01-01T00:00:00Z',
          '+275760-09-13T00:00:00Z',
          '1970-01-01T00:00:00Z',
          '2026-11-30T10:00:00+14:00',
          '2026-11-30',
          'yesterday',
        ]),
    ],
    [
      2,
      () =>
        rng.pick(['0s', '59s', '1m', '8h', '8h1s', '-5m', '1e9h', '99999999999999999999s', '1h30', 'PT1H', '5 m', 'h']),
    ],
    [
      1,
      () => rng.pick(['Mon 09:00-17:00', 'Mon-Fri 09:00-17:00 Europe/London', '25:00', 'Mars/Olympus', 'Etc/GMT+14']),
    ],
    [
      1,
      () => rng.pick(['http://127.0.0.1/x', 'https://[::1]/', 'https://10.0.0.1/', 'file:///etc/passwd', 'https://']),
    ],
  ])();
}

export function hostileNumber(rng: Rng): number {
  return rng.pick([
    0,
    -0,
    -1,
    1,
    1.5,
    4,
    5,
    9,
    10,
    99,
    100,
    101,
    301,
    86_400,
    86_401,
    10_001,
    1_000_001,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53,
    -(2 ** 53),
    1e308,
    Number.MIN_VALUE,
    -1e-7,
  ]);
}

/** A value of any JSON type, hostile where it can be. */
export function hostileValue(rng: Rng, depth = 0): unknown {
  return rng.weighted<() => unknown>([
    [4, () => hostileString(rng)],
    [3, () => hostileNumber(rng)],
    [2, () => rng.pick([null, true, false])],
    [1, () => (depth > 2 ? [] : [hostileValue(rng, depth + 1), hostileValue(rng, depth + 1)])],
    [1, () => (depth > 2 ? {} : { [hostileString(rng).slice(0, 40) || 'k']: hostileValue(rng, depth + 1) })],
    [1, () => DEEP],
  ])();
}

function typesOf(schema: Schema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** A value the schema accepts (as far as JSON Schema says), with realistic strings from `hint`. */
export function validFrom(schema: Schema, rng: Rng, hint: FieldHint, field = ''): unknown {
  const options = schema.anyOf ?? schema.oneOf;
  if (options && options.length > 0) return validFrom(rng.pick(options), rng, hint, field);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return rng.pick(schema.enum);
  const types = typesOf(schema);
  const type = types.length > 0 ? rng.pick(types) : 'any';
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [key, sub] of Object.entries(schema.properties ?? {})) {
        if (required.has(key) || rng.chance(0.5)) out[key] = validFrom(sub, rng, hint, key);
      }
      return out;
    }
    case 'array': {
      const n = rng.int(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3));
      return Array.from({ length: n }, () => validFrom(schema.items ?? {}, rng, hint, field));
    }
    case 'integer':
    case 'number': {
      const hinted = hint(field, rng);
      if (typeof hinted === 'number') return hinted;
      const min = schema.minimum ?? 0;
      const max = Math.min(schema.maximum ?? min + 1000, min + 1000);
      return rng.int(Math.ceil(min), Math.floor(max));
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'string': {
      const hinted = hint(field, rng);
      if (typeof hinted === 'string') return hinted;
      return `fuzz ${field} ${rng.int(0, 9999)}`;
    }
    default: {
      const hinted = hint(field, rng);
      if (hinted !== undefined) return hinted;
      return rng.pick<unknown>([{ n: rng.int(0, 9) }, 'text', 42, [1, 'two'], null, true]);
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Like structuredClone, for the plain JSON values generated here. */
function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Picks a (nested) object in `value` to mutate: the top, or one of its object fields. */
function someObject(value: Record<string, unknown>, rng: Rng): Record<string, unknown> {
  const nested = Object.values(value).filter(isRecord);
  return nested.length > 0 && rng.chance(0.3) ? rng.pick(nested) : value;
}

/** One mutation of a valid object; `ids` are ids from anywhere in the run (other tenants, other kinds). */
export function mutate(valid: unknown, rng: Rng, ids: readonly string[]): unknown {
  const value = clone(valid);
  if (!isRecord(value)) return rng.chance(0.5) ? hostileValue(rng) : value;
  const target = someObject(value, rng);
  const keys = Object.keys(target);
  const key = keys.length > 0 ? rng.pick(keys) : undefined;
  const kind = rng.weighted<string>([
    [3, 'drop'],
    [3, 'extra'],
    [6, 'retype'],
    [4, 'string'],
    [3, 'number'],
    [3, 'foreign-id'],
    [2, 'not-object'],
    [1, 'array-field'],
    [1, 'proto'],
  ]);
  switch (kind) {
    case 'drop':
      if (key !== undefined) delete target[key];
      break;
    case 'extra':
      target[rng.pick(['source', 'queued_by', 'endpoint_id', 'state', 'extra', 'id', '', 'a'.repeat(300)])] =
        hostileValue(rng);
      break;
    case 'retype':
      if (key !== undefined) target[key] = hostileValue(rng);
      break;
    case 'string':
      if (key !== undefined) target[key] = hostileString(rng);
      break;
    case 'number':
      if (key !== undefined) target[key] = rng.chance(0.8) ? hostileNumber(rng) : String(hostileNumber(rng));
      break;
    case 'foreign-id':
      if (key !== undefined && ids.length > 0) target[key] = rng.pick(ids);
      break;
    case 'not-object':
      return rng.pick<unknown>([null, [], [value], 'text', 7, true, DEEP]);
    case 'array-field':
      if (key !== undefined) target[key] = [target[key], target[key]];
      break;
    case 'proto':
      // An own key named __proto__ (assignment would set the prototype, and send nothing).
      Object.defineProperty(target, '__proto__', { value: { polluted: true }, enumerable: true });
      break;
  }
  // Several mutations at once now and then.
  return rng.chance(0.25) ? mutate(value, rng, ids) : value;
}

/** Nested arrays this deep, as raw JSON (JSON.stringify of the value itself would recurse). */
function deepJson(rng: Rng): string {
  const depth = rng.pick([64, 1_000, 5_000, 20_000, 100_000]);
  return rng.chance(0.5) ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/**
 * The JSON text of a value, with the deep-nesting placeholder expanded and, now and then,
 * a key of the top object duplicated (JSON.parse keeps the last).
 */
export function encode(value: unknown, rng: Rng): string {
  let text = value === undefined ? '' : JSON.stringify(value);
  while (text.includes(`"${DEEP}"`)) text = text.replace(`"${DEEP}"`, () => deepJson(rng));
  if (isRecord(value) && Object.keys(value).length > 0 && rng.chance(0.15)) {
    const key = rng.pick(Object.keys(value));
    text = `{${JSON.stringify(key)}:${JSON.stringify(hostileValue(rng)) ?? 'null'},${text.slice(1)}`;
  }
  return text;
}

/** Raw bodies that are not JSON at all. */
export function garbageText(rng: Rng): string | Buffer {
  return rng.weighted<() => string | Buffer>([
    [2, () => rng.pick(['{', '{"a":', '[1,2', '{"a":1}}', 'nul', "{'a':1}", '{"a":1,}', '\u0000', ''])],
    [1, () => Buffer.from(Array.from({ length: rng.int(1, 64) }, () => rng.int(0, 255)))],
    [1, () => Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])],
    [1, () => Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])],
    [1, () => '{"a":"\\ud800"}'],
    [1, () => '{"a":"\\u0000"}'],
    [1, () => '1e999999'],
    [1, () => '"just a string"'],
    [1, () => deepJson(rng)],
  ])();
}
