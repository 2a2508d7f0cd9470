// Admission policies (docs/design/admission.md): the policy shape, validation of a
// full-replace body against the schema's CHECKs (every problem named by its field), and the
// one decision every surface derives from a policy, its counters and an instant: admit, or
// defer with a reason and the next eligible instant. Pure: the instant and the counters are
// passed in. It reads and writes nothing; the store locks, counts and charges.

import { Temporal } from 'temporal-polyfill';
import type { Counters, DeferReason, PolicyRow, Usage } from '../domain/admission.js';
import { AppError, isAppError } from '../domain/errors.js';
import { parseWindow, windowBounds, type WindowSpec } from './window.js';

/** The schema's CHECK bounds. */
export const POLICY_BOUNDS = { maxInFlight: 10_000, maxClaimsPerWindow: 1_000_000 } as const;

export interface PolicyLimits {
  max_in_flight: number | null;
  max_claims_per_window: number | null;
  /** Required when max_claims_per_window is set; may be given without it (kept, unused). */
  window: WindowSpec | null;
}

export type { Counters, PolicyRow };

export type { DeferReason, Usage };

export type Decision =
  | { admit: true; windowStart: Date | null; usage: Usage }
  | { admit: false; reason: DeferReason; next_eligible_at: string | null; exact: boolean; usage: Usage | null };

/** The window spec stored in a row, or null when the row has no window. */
export function windowOf(row: PolicyRow): WindowSpec | null {
  if (!row.window_period || !row.window_tz || !row.window_start) return null;
  if (row.window_period === 'week') {
    return { period: 'week', tz: row.window_tz, start: row.window_start, weekday: row.window_weekday as 'Mon' };
  }
  return { period: row.window_period as 'hour' | 'day', tz: row.window_tz, start: row.window_start };
}

const iso = (i: Temporal.Instant | Date) =>
  i instanceof Date ? i.toISOString() : new Date(i.epochMilliseconds).toISOString();

/**
 * Admit or defer at `now`. Window exhaustion wins over a full in-flight cap (its wait is
 * exact and usually longer); a cap of 0 pauses the queue. An unknown zone fails closed.
 */
export function decide(row: PolicyRow, counters: Counters, now: Date): Decision {
  const spec = windowOf(row);
  let bounds: { start: Date; next: Date } | null = null;
  if (spec && row.max_claims_per_window !== null) {
    try {
      const b = windowBounds(spec, Temporal.Instant.fromEpochMilliseconds(now.getTime()));
      bounds = { start: new Date(b.start.epochMilliseconds), next: new Date(b.next.epochMilliseconds) };
    } catch (err) {
      if (!isAppError(err, 'admission_unavailable')) throw err;
      return { admit: false, reason: 'admission_unavailable', next_eligible_at: null, exact: false, usage: null };
    }
  }
  const used =
    bounds && counters.latestWindow && counters.latestWindow.start.getTime() === bounds.start.getTime()
      ? counters.latestWindow.used
      : 0;
  const usage: Usage = {
    max_in_flight: row.max_in_flight,
    in_flight: counters.inFlight,
    max_claims_per_window: row.max_claims_per_window,
    used,
    remaining: row.max_claims_per_window === null ? null : Math.max(0, row.max_claims_per_window - used),
    window_resets_at: bounds ? iso(bounds.next) : null,
  };
  if (row.max_in_flight === 0) return { admit: false, reason: 'paused', next_eligible_at: null, exact: false, usage };
  if (bounds && row.max_claims_per_window !== null && used >= row.max_claims_per_window) {
    return { admit: false, reason: 'window_exhausted', next_eligible_at: iso(bounds.next), exact: true, usage };
  }
  if (row.max_in_flight !== null && counters.inFlight >= row.max_in_flight) {
    const at = counters.earliestLeaseExpiry;
    return { admit: false, reason: 'in_flight_full', next_eligible_at: at ? iso(at) : null, exact: false, usage };
  }
  return { admit: true, windowStart: bounds?.start ?? null, usage };
}

/** The headroom a successful claim reports: its own claim and charge included. */
export function headroom(decision: Extract<Decision, { admit: true }>): Usage {
  const u = decision.usage;
  const used = decision.windowStart ? u.used + 1 : u.used;
  return {
    ...u,
    in_flight: u.in_flight + 1,
    used,
    remaining: u.max_claims_per_window === null ? null : Math.max(0, u.max_claims_per_window - used),
  };
}

type Problem = { field: string; message: string };

function limit(raw: Record<string, unknown>, key: string, max: number, problems: Problem[]): number | null {
  const value = raw[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    problems.push({ field: key, message: `must be a whole number from 0 to ${max}, or null` });
    return null;
  }
  return value;
}

const KNOWN = new Set(['max_in_flight', 'max_claims_per_window', 'window']);

/**
 * A full-replace body `{max_in_flight, max_claims_per_window, window}` checked as the
 * schema's CHECKs would, so a bad body never reaches the database. The first problem is
 * the error's `field` (e.g. `window.tz`); all of them are in `problems`.
 */
export function parsePolicy(input: unknown, prefix = ''): PolicyLimits {
  const at = (f: string) => `${prefix}${f}`;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw problemsError([{ field: prefix.replace(/\.$/, '') || 'body', message: 'must be an object' }]);
  }
  const raw = input as Record<string, unknown>;
  const problems: Problem[] = Object.keys(raw)
    .filter((k) => !KNOWN.has(k))
    .map((k) => ({ field: at(k), message: 'is not a known field' }));
  const maxInFlight = limit(raw, 'max_in_flight', POLICY_BOUNDS.maxInFlight, problems);
  const perWindow = limit(raw, 'max_claims_per_window', POLICY_BOUNDS.maxClaimsPerWindow, problems);
  let window: WindowSpec | null = null;
  if (raw.window !== undefined && raw.window !== null) {
    const parsed = parseWindow(raw.window);
    if (parsed.ok) window = parsed.spec;
    else
      problems.push(
        ...parsed.problems.map((p) => ({
          field: p.field === 'window' ? 'window' : `window.${p.field}`,
          message: p.message,
        })),
      );
  } else if (perWindow !== null) {
    problems.push({
      field: 'window',
      message: 'is required with max_claims_per_window: {period, tz, start, weekday?}',
    });
  }
  if (problems.length === 0 && maxInFlight === null && perWindow === null) {
    problems.push({ field: 'max_in_flight', message: 'set max_in_flight or max_claims_per_window (or both)' });
  }
  if (problems.length > 0)
    throw problemsError(problems.map((p) => ({ ...p, field: p.field.startsWith(prefix) ? p.field : at(p.field) })));
  return { max_in_flight: maxInFlight, max_claims_per_window: perWindow, window };
}

function problemsError(problems: Problem[]): AppError {
  const first = problems[0] ?? { field: 'body', message: 'is invalid' };
  return new AppError('invalid_argument', `${first.field}: ${first.message}`, { field: first.field, problems });
}

/** A policy as the surfaces show it. */
export function policyView(row: PolicyRow) {
  return {
    queue: row.queue,
    max_in_flight: row.max_in_flight,
    max_claims_per_window: row.max_claims_per_window,
    window: windowOf(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
