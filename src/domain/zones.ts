// IANA zone names: one check and one message for every place that takes a zone — a
// schedule's `tz`, a budget window's `tz`, a presence shift's zone, and the CLI's `--tz`.

import { Temporal } from 'temporal-polyfill';

/** Characters of an IANA zone name; an offset such as `+05:30` is not a zone name. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

/** The longest zone name accepted (the longest in the zone database is 32). */
export const ZONE_NAME_MAX = 64;

/** Spelled like a zone name: the zone database may still lack it. */
export function isZoneName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= ZONE_NAME_MAX && ZONE_NAME.test(value);
}

/** The zone's name as the zone database spells it, or undefined when it is not a zone known here. */
export function zoneId(tz: string): string | undefined {
  if (!isZoneName(tz)) return undefined;
  try {
    return Temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(tz).timeZoneId;
  } catch {
    return undefined;
  }
}

/** What every surface says of a zone it cannot use, echoing the value given. */
export function unknownZone(value: unknown): string {
  const shown = typeof value === 'string' ? `"${value.slice(0, ZONE_NAME_MAX + 1)}"` : JSON.stringify(value);
  return `${shown} is not an IANA zone this server knows, such as Europe/Berlin or UTC`;
}

/**
 * An instant on a zone's wall clock, as the board and the CLI show a schedule's runs:
 * "1 Jun 2026, 09:00 Europe/Berlin". A zone unknown here shows the instant in UTC.
 */
export function wallClock(instant: Date, tz: string): string {
  try {
    const text = new Intl.DateTimeFormat('en-GB', { timeZone: tz, dateStyle: 'medium', timeStyle: 'short' }).format(
      instant,
    );
    return `${text} ${tz}`;
  } catch {
    return instant.toISOString();
  }
}
