// Effective presence of an endpoint at an instant (docs/design/hooks-and-presence.md): an
// unexpired override beats the shift, which beats the default `in`. A pure function of
// the stored columns and the instant, so every instance evaluating the same row at the
// same time agrees.

import { Temporal } from 'temporal-polyfill';
import { nextShiftStart, parseShift, shiftStatus } from './shift.js';

export type Presence = 'in' | 'out';
export type PresenceSource = 'agent' | 'operator' | 'shift' | 'default';

export interface PresenceColumns {
  shift: string | null;
  presence_override: Presence | null;
  override_until: Date | null;
  /** `agent` or `operator:<human_id>`. */
  override_by: string | null;
}

export interface EffectivePresence {
  presence: Presence;
  source: PresenceSource;
  /** When it next changes by itself (override end, shift boundary); null: not by itself. */
  until: Date | null;
}

/** The longest clock_in an agent may ask for: an agent cannot keep itself in overnight. */
export const MAX_CLOCK_IN_SECONDS = 8 * 3600;
export const DEFAULT_CLOCK_IN_SECONDS = 3600;

const toDate = (i: Temporal.Instant | null) => (i ? new Date(i.epochMilliseconds) : null);
const instantOf = (d: Date) => Temporal.Instant.fromEpochMilliseconds(d.getTime());

export function overrideActive(row: PresenceColumns, now: Date): boolean {
  return row.presence_override !== null && (row.override_until === null || row.override_until > now);
}

export function effectivePresence(row: PresenceColumns, now: Date): EffectivePresence {
  if (overrideActive(row, now) && row.presence_override) {
    const source = row.override_by?.startsWith('operator') ? 'operator' : 'agent';
    return { presence: row.presence_override, source, until: row.override_until };
  }
  if (row.shift) {
    const status = shiftStatus(parseShift(row.shift), instantOf(now));
    return { presence: status.onShift ? 'in' : 'out', source: 'shift', until: toDate(status.until) };
  }
  return { presence: 'in', source: 'default', until: null };
}

export type OverrideChange =
  | { set: { presence: Presence; until: Date | null } }
  /** Back to the shift (or the default). */
  | { clear: true };

/** clock_out: out until the next shift start, or indefinitely without a shift. */
export function clockOutChange(shift: string | null, now: Date): OverrideChange {
  const next = shift ? nextShiftStart(parseShift(shift), instantOf(now)) : null;
  return { set: { presence: 'out', until: toDate(next) } };
}

/**
 * clock_in {for}: on shift (or without a shift) it clears an `out` override; off shift it
 * sets `in` until the earlier of now + for and the next shift start.
 */
export function clockInChange(shift: string | null, now: Date, forSeconds: number): OverrideChange {
  if (!shift) return { clear: true };
  const parsed = parseShift(shift);
  const status = shiftStatus(parsed, instantOf(now));
  if (status.onShift) return { clear: true };
  const end = new Date(now.getTime() + forSeconds * 1000);
  const next = toDate(nextShiftStart(parsed, instantOf(now)));
  return { set: { presence: 'in', until: next && next < end ? next : end } };
}
