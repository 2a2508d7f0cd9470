// `switchboard todo cancel|retry ENDPOINT --filter KEY=VALUE … [--dry-run]`: the bulk form
// of cancel and retry (POST /api/v1/endpoints/{ref}/todos/bulk, docs/api.md "Bulk
// actions"). A --filter turns the ID argument into an endpoint; without one, cancel and
// retry act on one todo as before (src/cli/todo.ts).

import type { BulkActionResult as BulkAnswer } from '../client/index.js';
import { TODO_STATES } from '../domain/todo.js';
import { signedInClient } from './client.js';
import { endpointPath } from './endpoint.js';
import { CliError, EXIT } from './exit.js';
import { LIMITS, oneOf, queueName, textFlag, type CommonOptions } from './flags.js';
import { emit } from './output.js';

/** The filter keys, as the API names them. */
export const FILTER_KEYS = [
  'queue',
  'state',
  'kind',
  'source',
  'created_before',
  'created_after',
  'q',
  'priority',
  'priority_min',
] as const;

export interface BulkOptions extends CommonOptions {
  filter?: string[];
  dryRun?: boolean;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

function filterValue(key: (typeof FILTER_KEYS)[number], value: string): string | number {
  const flag = `--filter ${key}`;
  switch (key) {
    case 'priority':
    case 'priority_min':
      if (!/^[+-]?\d{1,3}$/.test(value) || Math.abs(Number(value)) > 100)
        throw new CliError(`${flag}: "${value}" is not a whole number from -100 to 100`, EXIT.usage);
      return Number(value);
    case 'queue':
      return queueName(flag, value);
    case 'state':
      return oneOf(flag, value, TODO_STATES);
    case 'created_before':
    case 'created_after':
      if (!RFC3339.test(value) || Number.isNaN(Date.parse(value)))
        throw new CliError(`${flag}: "${value}" is not a time such as 2026-01-31T09:00:00Z`, EXIT.usage);
      return value;
    case 'q':
      return textFlag(flag, value, LIMITS.titleChars);
    default:
      return textFlag(flag, value, LIMITS.kindChars);
  }
}

/** `--filter KEY=VALUE` flags → the API's filter object; a usage error names the bad one. */
export function bulkFilter(entries: string[]): Record<string, string | number> {
  const filter: Record<string, string | number> = {};
  for (const entry of entries) {
    const at = entry.indexOf('=');
    const key = at > 0 ? entry.slice(0, at).replace(/-/g, '_') : '';
    if (!(FILTER_KEYS as readonly string[]).includes(key))
      throw new CliError(`--filter: "${entry}" is not KEY=VALUE with KEY one of ${FILTER_KEYS.join(', ')}`, EXIT.usage);
    if (key in filter) throw new CliError(`--filter: ${key} given twice`, EXIT.usage);
    filter[key] = filterValue(key as (typeof FILTER_KEYS)[number], entry.slice(at + 1));
  }
  return filter;
}

const VERB = { cancel: 'canceled', retry: 'retried' } as const;

export async function bulk(action: 'cancel' | 'retry', endpoint: string, opts: BulkOptions): Promise<void> {
  const filter = bulkFilter(opts.filter ?? []);
  const client = await signedInClient(opts.url);
  const answer = await client.request<BulkAnswer>('POST', `${endpointPath(endpoint)}/todos/bulk`, {
    action,
    filter,
    ...(opts.dryRun ? { dry_run: true } : {}),
  });
  emit(opts.json, answer, (a) =>
    a.dry_run
      ? `${a.matched} todo(s) match; nothing changed (dry run)`
      : `${a.changed} of ${a.matched} matching todo(s) ${VERB[a.action]}`,
  );
}
