// Token-bucket rate limits, in memory per instance (a limit per instance is what an
// operator can reason about behind a load balancer; PostgreSQL is not spent on it).

export interface BucketSpec {
  /** Sustained requests per second. */
  perSecond: number;
  /** Requests allowed at once before the rate applies. */
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly spec: BucketSpec,
    // Idle buckets are full again after burst / perSecond; past that they are dropped so
    // the map does not grow with every address ever seen.
    private readonly maxKeys = 100_000,
  ) {}

  /** 0 when allowed (a token is spent), else the seconds until one is available. */
  take(key: string, nowMs: number): number {
    const bucket = this.buckets.get(key) ?? { tokens: this.spec.burst, at: nowMs };
    bucket.tokens = Math.min(this.spec.burst, bucket.tokens + ((nowMs - bucket.at) / 1000) * this.spec.perSecond);
    bucket.at = nowMs;
    if (!this.buckets.has(key)) {
      if (this.buckets.size >= this.maxKeys) this.prune(nowMs);
      this.buckets.set(key, bucket);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.spec.perSecond);
  }

  private prune(nowMs: number): void {
    const refillMs = (this.spec.burst / this.spec.perSecond) * 1000;
    for (const [key, bucket] of this.buckets) if (nowMs - bucket.at > refillMs) this.buckets.delete(key);
    if (this.buckets.size >= this.maxKeys) this.buckets.clear();
  }
}

/**
 * The limits of the API. Per address before authentication, so floods never reach the
 * database; per credential after it, so one busy script cannot starve the rest; and a
 * tight one on password sign-in, to make guessing slow.
 */
export const LIMITS = {
  perIp: { perSecond: 50, burst: 100 },
  perCredential: { perSecond: 20, burst: 40 },
  signIn: { perSecond: 0.2, burst: 10 },
} as const satisfies Record<string, BucketSpec>;
