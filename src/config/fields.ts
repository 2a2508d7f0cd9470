// The field types of the environment schema (src/config/schema.ts): durations, bounded
// integers, the listen address, the database URL, CIDR lists; and the loopback test that
// decides whether auth may be off. Pure, like the schema.

import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDuration } from './duration.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function duration(defaultText: string, minMs: number, maxMs: number, range: string) {
  return z
    .string()
    .default(defaultText)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === null) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration such as 90s, 15m, 6h` });
        return z.NEVER;
      }
      if (ms < minMs || ms > maxMs) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is outside the allowed range ${range}` });
        return z.NEVER;
      }
      return ms;
    });
}

/** Like duration() with no default: undefined when unset. */
export function optionalDuration(minMs: number, maxMs: number, range: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
      const ms = parseDuration(text);
      if (ms === null || ms < minMs || ms > maxMs) {
        ctx.addIssue({
          code: 'custom',
          message:
            ms === null
              ? `"${text}" is not a duration such as 90s, 15m, 6h`
              : `"${text}" is outside the allowed range ${range}`,
        });
        return z.NEVER;
      }
      return ms;
    });
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

export const databaseUrl = z
  .string()
  .optional()
  .refine(
    (text) => text === undefined || /^postgres(ql)?:\/\//.test(text),
    'must start with postgres:// or postgresql://',
  );

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
