// The fuzzers' deterministic randomness: one seed per run (printed; SWITCHBOARD_FUZZ_SEED
// replays it), split per surface so each file draws its own stream, and the case count
// (SWITCHBOARD_FUZZ_CASES, the total over the three surfaces; `npm test` runs a short form).

import { createHash, randomInt } from 'node:crypto';

/** The short form `npm test` runs: a few hundred cases over all three surfaces. */
export const SHORT_FORM_CASES = 900;

/** The shares of the total case count each surface runs. */
const SHARES = { api: 0.4, mcp: 0.4, ws: 0.2 } as const;
export type Surface = keyof typeof SHARES;

export function fuzzSeed(): number {
  const text = process.env.SWITCHBOARD_FUZZ_SEED;
  if (text === undefined || text === '') return randomInt(1, 2 ** 31);
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new Error(`SWITCHBOARD_FUZZ_SEED: "${text}" is not an integer`);
  return seed;
}

export function casesFor(surface: Surface): number {
  const text = process.env.SWITCHBOARD_FUZZ_CASES;
  const total = text === undefined || text === '' ? SHORT_FORM_CASES : Number(text);
  if (!Number.isSafeInteger(total) || total < 1) throw new Error(`SWITCHBOARD_FUZZ_CASES: "${text}" is not a count`);
  return Math.max(1, Math.round(total * SHARES[surface]));
}

/** A small seeded PRNG (sfc32) with the draws the generators need. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream: string) {
    const digest = createHash('sha256').update(`${seed}/${stream}`).digest();
    this.a = digest.readUInt32LE(0);
    this.b = digest.readUInt32LE(4);
    this.c = digest.readUInt32LE(8);
    this.d = digest.readUInt32LE(12);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(entries: readonly (readonly [number, T])[]): T {
    const total = entries.reduce((n, [w]) => n + w, 0);
    let roll = this.next() * total;
    for (const [w, value] of entries) {
      roll -= w;
      if (roll < 0) return value;
    }
    return entries[entries.length - 1]![1];
  }
}
