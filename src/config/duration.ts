// Parses the human durations used in configuration: "90s", "15m", "6h", "30d", "250ms".
// A bare number is rejected on purpose: "30" could mean seconds or minutes, and a wrong
// guess silently changes a lease or a retention window by a factor of sixty.

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** Milliseconds for a duration string, or null when it is not one. */
export function parseDuration(text: string): number | null {
  const match = PATTERN.exec(text.trim());
  if (!match) return null;
  const [, amount, unit] = match;
  const ms = Number(amount) * (UNIT_MS[unit ?? ''] ?? NaN);
  return Number.isFinite(ms) ? Math.round(ms) : null;
}

/** The shortest exact rendering: 90000 → "90s", 900000 → "15m". */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit] ?? 1;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
