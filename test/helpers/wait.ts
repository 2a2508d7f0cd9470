// Waiting for something another process or a background pass does: poll until it holds,
// or fail naming it. The ceiling is generous on purpose: it costs nothing when the thing
// happens, and CI runs two test files at once on two cores, where a LISTEN/NOTIFY hop or
// a ring has taken over 5 s while another file saturated PostgreSQL.

import assert from 'node:assert/strict';

export const WAIT_MS = 15_000;

export async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = WAIT_MS,
  pollMs = 20,
): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  assert.fail(`timed out waiting for ${what}`);
}
