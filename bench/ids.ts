// What making an id costs: the ULID factory with the ulid package's default randomness
// (`randomBytes(1)` per random character) against the pooled randomness src/domain/ids.ts
// uses, in the same process, alternating, each forced onto the path a server takes (a new
// millisecond per id, so all 16 random characters are drawn, none incremented).

import { monotonicFactory } from 'ulid';
import { randomPool } from '../src/domain/ids.js';
import { median } from './db.js';

const IDS = Number(process.env.BENCH_IDS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

function nsPerId(make: (seedTime: number) => string): number {
  let seed = Date.now();
  const started = process.hrtime.bigint();
  for (let i = 0; i < IDS; i++) make(seed++);
  return Number(process.hrtime.bigint() - started) / IDS;
}

export function runIdsBench(): Promise<void> {
  process.stdout.write(`ids bench: ${IDS} ULIDs a round, ${ROUNDS} rounds each\n`);
  const library: number[] = [];
  const pooled: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    library.push(nsPerId(monotonicFactory()));
    pooled.push(nsPerId(monotonicFactory(randomPool(4096))));
  }
  const [a, b] = [median(library), median(pooled)];
  process.stdout.write(
    `library default randomness  ${a.toFixed(0)} ns/id\n` +
      `pooled (src/domain/ids.ts)  ${b.toFixed(0)} ns/id\n` +
      `pooled ÷ default            ${(b / a).toFixed(3)}\n`,
  );
  return Promise.resolve();
}
