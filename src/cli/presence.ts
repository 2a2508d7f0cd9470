// `switchboard presence show|in|out|clear|shift`: an endpoint's presence as its owner
// steers it. Out: no doorbells, notify hooks held; pull works as always. An override
// (in/out, optionally --until) beats the shift, which beats the default in.

import type { Command } from 'commander';
import type { Presence } from '../client/index.js';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { apiCommand, exclusive, futureTime, oneLineErrors, run, textFlag, type CommonOptions } from './flags.js';
import { emit, keyValues } from './output.js';

interface UntilOptions extends CommonOptions {
  until?: string;
}

interface ShiftOptions extends CommonOptions {
  clear?: boolean;
}

const show = (a: Presence) =>
  keyValues([
    ['presence', a.presence],
    ['source', a.source],
    ['until', a.until ?? '-'],
    ['shift', a.shift ?? '-'],
    ['pending', a.pending],
  ]);

export function registerPresence(program: Command): void {
  const group = oneLineErrors(program.command('presence').description("an endpoint's presence (in or out) and shift"));
  apiCommand(group, 'show', 'show presence, why, until when, the shift and pending work')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .action(run(read));
  for (const presence of ['in', 'out'] as const) {
    apiCommand(group, presence, `clock the endpoint ${presence} (until --until, or until cleared)`)
      .argument('<ENDPOINT>', 'endpoint slug or id')
      .option('--until <TIME>', 'RFC 3339 time the override ends, e.g. 2030-01-31T18:00:00Z')
      .action(run((endpoint: string, opts: UntilOptions) => set(endpoint, presence, opts)));
  }
  apiCommand(group, 'clear', 'drop the override: back to the shift (or in)')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .action(run(clear));
  apiCommand(group, 'shift', 'set the shift, e.g. "TZ=Europe/Berlin; Mon-Fri 09:00-17:00", or --clear it')
    .argument('<ENDPOINT>', 'endpoint slug or id')
    .argument('[EXPR]', 'shift expression')
    .option('--clear', 'remove the shift')
    .action(run(shift));
}

/** The PUT body of `presence in|out`; throws a usage error naming the bad flag. */
export function presenceBody(presence: 'in' | 'out', opts: UntilOptions): Record<string, unknown> {
  return { presence, until: opts.until === undefined ? null : futureTime('--until', opts.until) };
}

/** The PUT body of `presence shift`; exactly one of EXPR and --clear. */
export function shiftBody(expr: string | undefined, opts: ShiftOptions): Record<string, unknown> {
  exclusive(['EXPR', expr], ['--clear', opts.clear]);
  if (opts.clear) return { shift: null };
  return { shift: textFlag('EXPR', expr ?? '', 500) };
}

async function read(endpoint: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  emit(opts.json, await client.request<Presence>('GET', `${endpointPath(endpoint)}/presence`), show);
}

async function set(endpoint: string, presence: 'in' | 'out', opts: UntilOptions): Promise<void> {
  const body = presenceBody(presence, opts);
  const client = await signedInClient(opts.url);
  emit(opts.json, await client.request<Presence>('PUT', `${endpointPath(endpoint)}/presence`, body), show);
}

async function clear(endpoint: string, opts: CommonOptions): Promise<void> {
  const client = await signedInClient(opts.url);
  emit(opts.json, await client.request<Presence>('DELETE', `${endpointPath(endpoint)}/presence`), show);
}

async function shift(endpoint: string, expr: string | undefined, opts: ShiftOptions): Promise<void> {
  const body = shiftBody(expr, opts);
  const client = await signedInClient(opts.url);
  emit(opts.json, await client.request<Presence>('PUT', `${endpointPath(endpoint)}/shift`, body), show);
}
