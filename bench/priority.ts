// Claim → complete with mixed priorities against the same with one priority, on one
// database in one run (docs/design/todos.md, "Priority and not before").
//
// Both: 16 workers each loop claim_next → complete through the todo use cases, exactly
// as the claim bench's Switchboard side (bench/claim.ts). Mixed: the backlog is spread
// over five priorities, interleaved, so successive claims walk the ready index from one
// priority's range into the next as each empties. Plain: every todo at priority 0.
// Rounds alternate which goes first; the figure is the median of the per-round ratios.
// Target: mixed ÷ plain ≥ 0.9 (priority must not cost the claim path).

import { createPool } from '../src/db/pool.js';
import { ROUNDS, TODOS, WORKERS, freshEndpoint, switchboardRound } from './claim.js';
import { benchDatabase, median } from './db.js';

export async function runPriorityBench(): Promise<void> {
  const db = await benchDatabase();
  const pool = createPool({ url: db.url, max: WORKERS });
  try {
    process.stdout.write(
      `priority bench: ${WORKERS} workers, ${TODOS} todos a round, ${ROUNDS} rounds each, on ${db.server}\n`,
    );
    const run = async (mixed: boolean, todos = TODOS) =>
      switchboardRound(pool, await freshEndpoint(pool, todos, mixed), todos);
    await run(false, 2_000);
    await run(true, 2_000);
    const plain: number[] = [];
    const mixed: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      if (round % 2) {
        plain.push(await run(false));
        mixed.push(await run(true));
      } else {
        mixed.push(await run(true));
        plain.push(await run(false));
      }
      process.stdout.write(
        `  round ${round}: one priority ${plain.at(-1)?.toFixed(0)}/s, mixed ${mixed.at(-1)?.toFixed(0)}/s, ` +
          `ratio ${((mixed.at(-1) ?? 0) / (plain.at(-1) ?? 1)).toFixed(3)}\n`,
      );
    }
    const ratio = median(mixed.map((m, i) => m / (plain[i] ?? m)));
    process.stdout.write(
      `one priority  ${median(plain).toFixed(0)} cycles/s\n` +
        `mixed (5)     ${median(mixed).toFixed(0)} cycles/s\n` +
        `ratio         ${ratio.toFixed(3)} (target ≥ 0.9)\n`,
    );
  } finally {
    await pool.end();
    await db.close();
  }
}
