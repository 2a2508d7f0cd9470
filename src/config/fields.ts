// The field types of the environment schema (src/config/schema.ts): durations, bounded
// integers, the listen address, the database URL, CIDR lists; and the loopback test that
// decides whether auth may be off. Pure, like the schema.

import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { parseDatabaseUrl, type SessionAttrs } from '../domain/database-url.js';

const WRITABLE_ATTRS: readonly SessionAttrs[] = ['any', 'read-write', 'primary'];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** `auto`: one readable line per event on a terminal, JSON lines otherwise. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

/**
 * `text` as milliseconds within minMs–maxMs, or an issue on ctx naming what is wrong.
 * With `zeroOff`, a bare `0` (or `0s`) is allowed and answers 0: the setting is off.
 */
function checkedDuration(
  text: string,
  ctx: z.RefinementCtx,
  bounds: { minMs: number; maxMs: number; range: string; zeroOff?: boolean },
): number {
  const ms = bounds.zeroOff && text.trim() === '0' ? 0 : parseDuration(text);
  const off = bounds.zeroOff === true && ms === 0;
  if (ms === null || (!off && (ms < bounds.minMs || ms > bounds.maxMs))) {
    const example = `a duration such as 90s, 15m, 6h${bounds.zeroOff ? ' (or 0 for none)' : ''}`;
    ctx.addIssue({
      code: 'custom',
      message: ms === null ? `"${text}" is not ${example}` : `"${text}" is outside the allowed range ${bounds.range}`,
    });
    return z.NEVER;
  }
  return ms;
}

export function duration(defaultText: string, minMs: number, maxMs: number, range: string) {
  return z
    .string()
    .default(defaultText)
    .transform((text, ctx) => checkedDuration(text, ctx, { minMs, maxMs, range }));
}

/**
 * A timeout that `0` (or `0s`) switches off, answering 0; otherwise a duration within
 * minMs–maxMs, like duration().
 */
export function timeoutDuration(defaultText: string, minMs: number, maxMs: number, range: string) {
  return z
    .string()
    .default(defaultText)
    .transform((text, ctx) => checkedDuration(text, ctx, { minMs, maxMs, range, zeroOff: true }));
}

/** Like duration() with no default: undefined when unset. */
export function optionalDuration(minMs: number, maxMs: number, range: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => (text === undefined ? undefined : checkedDuration(text, ctx, { minMs, maxMs, range })));
}

export function integer(defaultValue: number, min: number, max: number) {
  return z
    .string()
    .default(String(defaultValue))
    .transform((text, ctx) => {
      const n = Number(text);
      if (!/^\d+$/.test(text.trim()) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });
}

export const listen = z
  .string()
  .default('127.0.0.1:8080')
  .transform((text, ctx) => {
    const match = /^(?:\[([0-9a-fA-F:]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
    const port = Number(match?.[3]);
    if (!match || port > 65535) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080)` });
      return z.NEVER;
    }
    return { host: match[1] ?? match[2] ?? '127.0.0.1', port };
  });

/**
 * A comma-separated list, trimmed and lower-cased, empty entries dropped; an entry `valid`
 * refuses is named in the problem with what was expected (`expected`, e.g. "a host name").
 */
function commaList(valid: RegExp, expected: string) {
  return z
    .string()
    .default('')
    .transform((text, ctx) => {
      const entries = text
        .split(',')
        .map((e) => e.trim().toLowerCase())
        .filter(Boolean);
      const bad = entries.find((e) => !valid.test(e));
      if (bad) {
        ctx.addIssue({ code: 'custom', message: `"${bad}" is not ${expected}` });
        return z.NEVER;
      }
      return entries;
    });
}

/** A comma-separated list of host names (`switchboard.example.com`, `10.0.0.5`, `[::1]`), lower-cased. */
export const hostList = commaList(
  /^(?:[a-z0-9]([a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/,
  'a host name (e.g. switchboard.example.com or [::1], no port)',
);

/** A comma-separated list of e-mail domains (`example.com`), lower-cased, no `@`. */
export const domainList = commaList(
  /^(?:[a-z0-9]([a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/,
  'an e-mail domain (e.g. example.com, no @)',
);

/** A comma-separated list of e-mail addresses, lower-cased. */
export const emailList = commaList(/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/, 'an e-mail address');

/**
 * A postgres:// URL with one host or several (`h1:5432,h2:5433`, libpq's form). Switchboard
 * writes on every path and LISTENs for the bus, so a target_session_attrs that asks for a
 * standby or a read-only session is refused here rather than failing every write later.
 */
export const databaseUrl = z
  .string()
  .optional()
  .superRefine((text, ctx) => {
    if (text === undefined) return;
    if (!/^postgres(ql)?:\/\//.test(text)) {
      ctx.addIssue({ code: 'custom', message: 'must start with postgres:// or postgresql://' });
      return;
    }
    const parsed = parseDatabaseUrl(text);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.problem });
    else if (!WRITABLE_ATTRS.includes(parsed.target.attrs)) {
      ctx.addIssue({
        code: 'custom',
        message: `target_session_attrs=${parsed.target.attrs} cannot work: Switchboard writes, so use read-write, primary or any`,
      });
    }
  });

export const cidrList = z
  .string()
  .default('')
  .transform((text, ctx) => {
    const entries = text
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const bad = entries.find((e) => {
      const [address, bits, extra] = e.split('/');
      return extra !== undefined || !address || isIP(address) === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits));
    });
    if (bad) {
      ctx.addIssue({ code: 'custom', message: `"${bad}" is not an IP address or CIDR (e.g. 10.0.0.0/8)` });
      return z.NEVER;
    }
    return entries;
  });

/** True for 127.0.0.0/8, ::1 and "localhost": addresses no other machine can reach. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
