// What every API command shares: the --json and --url options, commander's own errors
// (unknown flag, missing argument) as one stderr line with exit 2, an action wrapper that
// turns any failure into one line and its exit code, and the client-side checks of flag
// values, each naming its flag. The server validates everything again; these checks only
// save a round trip and give a clearer message.

import { parseDuration } from '../config/duration.js';
import type { Command } from 'commander';
import { LEASE_BOUNDS, LIMITS, QUEUE_NAME } from '../domain/todo.js';
import { ApiError } from './client.js';
import { CliError, EXIT, fail, usageOutput } from './exit.js';

export { LEASE_BOUNDS, LIMITS };

export interface CommonOptions {
  json?: boolean;
  url?: string;
}

/** A subcommand of `parent` that talks to the API: --json and --url, one-line errors. */
export function apiCommand(parent: Command, name: string, description: string): Command {
  const command = parent
    .command(name)
    .description(description)
    .option('--json', 'print the answer as JSON')
    .option('--url <URL>', 'the server to talk to (default: SWITCHBOARD_URL, else the saved login)');
  return oneLineErrors(command);
}

/**
 * commander's usage errors as `switchboard: <problem> (see `… --help`)`, no help dump;
 * under --json as the error object (exit.ts).
 */
export function oneLineErrors(command: Command): Command {
  return command.showHelpAfterError(false).configureOutput({
    outputError: (message, write) => write(usageOutput(message, commandPath(command))),
  });
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * The request, with a refusal of a body field the command took from a flag told in the
 * flag's name: the server says `cron: …`, the user typed `--cron`.
 */
export async function asFlags<T>(request: Promise<T>, flags: Readonly<Record<string, string>>): Promise<T> {
  try {
    return await request;
  } catch (err) {
    const flag = err instanceof ApiError && err.field !== undefined ? flags[err.field] : undefined;
    if (!(err instanceof ApiError) || flag === undefined || err.field === undefined) throw err;
    const message = err.message.startsWith(`${err.field}:`)
      ? `${flag}:${err.message.slice(err.field.length + 1)}`
      : `${flag}: ${err.message}`;
    throw new ApiError(message, err.code, err.status, { ...err.details, field: flag });
  }
}

/** Wraps an action so a failure prints one line and exits with its code, never a stack. */
export function run<A extends unknown[]>(action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (err) {
      fail(err);
    }
  };
}

function usage(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/**
 * For repeatable options such as --queue a --queue b. No default is given to commander
 * (its help would print `(default: [])`): an option never given is undefined.
 */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function wholeNumber(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max)
    throw usage(`${flag}: must be a whole number from ${min} to ${max}`);
  return n;
}

export function jsonValue(flag: string, value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw usage(`${flag}: not valid JSON`);
  }
}

export function queueName(flag: string, value: string): string {
  if (!QUEUE_NAME.test(value))
    throw usage(`${flag}: "${value}" is not a queue name (lowercase letters, digits, - and _, at most 63)`);
  return value;
}

export function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw usage(`${flag}: must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** Non-empty after trimming and at most `max` characters. */
export function textFlag(flag: string, value: string, max: number): string {
  if (value.trim() === '') throw usage(`${flag}: must not be empty`);
  if (value.length > max) throw usage(`${flag}: longer than ${max} characters`);
  return value;
}

/** Comma-separated, blanks trimmed, no empty entries. */
export function listFlag(flag: string, value: string): string[] {
  const items = value.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw usage(`${flag}: an empty entry in "${value}"`);
  return items;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 time in the future, as UTC. */
export function futureTime(flag: string, value: string, now = Date.now()): string {
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw usage(`${flag}: "${value}" is not a time such as 2030-01-31T18:00:00Z`);
  if (ms <= now) throw usage(`${flag}: ${value} is in the past`);
  return new Date(ms).toISOString();
}

/** An integer, negative allowed, from min to max (e.g. --priority). */
export function integer(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^[+-]?\d+$/.test(value.trim()) || n < min || n > max)
    throw usage(`${flag}: must be an integer from ${min} to ${max}`);
  return n;
}

/** Any RFC 3339 time (past ones too), as UTC. */
export function rfc3339Time(flag: string, value: string): string {
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw usage(`${flag}: "${value}" is not a time such as 2030-01-31T18:00:00Z`);
  return new Date(ms).toISOString();
}

/** The instant a duration from now is, as UTC (e.g. --in 2h). */
export function timeIn(flag: string, value: string, now = Date.now()): string {
  const ms = parseDuration(value);
  if (ms === null) throw usage(`${flag}: "${value}" is not a duration such as 90s, 15m, 2h or 1d`);
  return new Date(now + ms).toISOString();
}

/** Rejects two flags given together, e.g. --body and --body-file. */
export function exclusive(a: [string, unknown], b: [string, unknown]): void {
  if (a[1] !== undefined && b[1] !== undefined) throw usage(`${a[0]} and ${b[0]}: give one, not both`);
}
