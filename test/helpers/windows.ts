// Budget windows for tests that must not see a window roll over while they run.

/**
 * A window start half a period away from now in `tz`, so no boundary passes during the
 * race: a rollover gives the budget afresh, and a race that straddled one (CI at 13:15
 * UTC, an hour boundary in Kathmandu) counted 223 claims against a window of 120.
 */
export function startAwayFromNow(tz: string, period: 'hour' | 'day'): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: tz,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date());
  const hour = Number(parts.find((p) => p.type === 'hour')?.value);
  const minute = Number(parts.find((p) => p.type === 'minute')?.value);
  const pad = (n: number) => String(n).padStart(2, '0');
  return period === 'hour' ? `00:${pad((minute + 30) % 60)}` : `${pad((hour + 12) % 24)}:00`;
}
