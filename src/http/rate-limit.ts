// Token-bucket rate limits, in memory per instance (a limit per instance is what an
// operator can reason about behind a load balancer; PostgreSQL is not spent on it), and
// the IETF RateLimit / RateLimit-Policy header fields that describe them
// (draft-ietf-httpapi-ratelimit-headers; docs/api.md, "Rate limits").

import { isIP } from 'node:net';

export interface BucketSpec {
  /** Sustained requests per second. */
  perSecond: number;
  /** Requests allowed at once before the rate applies. */
  burst: number;
}

export interface BucketState {
  /** 0 when the request was allowed, else whole seconds until a token is available. */
  waitSeconds: number;
  /** Whole requests left in the bucket now. */
  remaining: number;
  /** Whole seconds until the bucket is full again. */
  fullInSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Buckets by key, at most `maxKeys` of them. The map is kept in order of last touch (a
 * touched key is re-inserted at the end), so when it is full the least recently touched
 * key is evicted: one key at a time, never everyone's state at once — a flood of fresh
 * keys (addresses, e-mails) cannot reset the buckets of the keys being throttled, only
 * push out the ones that went quiet longest ago.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly spec: BucketSpec,
    // 100,000 keys of ~100 bytes: ~10 MB at worst. An idle bucket is full again after
    // burst / perSecond anyway; an evicted one starts full, as it would have been soon.
    private readonly maxKeys = 100_000,
  ) {}

  /** 0 when allowed (a token is spent), else the seconds until one is available. */
  take(key: string, nowMs: number): number {
    return this.check(key, nowMs).waitSeconds;
  }

  /**
   * take() with what the bucket holds after it: for the RateLimit header fields. `cost`
   * tokens are spent at once (a JSON-RPC batch pays one per message), or none.
   */
  check(key: string, nowMs: number, cost = 1): BucketState {
    const bucket = this.buckets.get(key) ?? { tokens: this.spec.burst, at: nowMs };
    bucket.tokens = Math.min(this.spec.burst, bucket.tokens + ((nowMs - bucket.at) / 1000) * this.spec.perSecond);
    bucket.at = nowMs;
    if (!this.buckets.delete(key)) this.evictFor(1);
    this.buckets.set(key, bucket);
    const allowed = bucket.tokens >= cost;
    if (allowed) bucket.tokens -= cost;
    return {
      waitSeconds: allowed ? 0 : Math.ceil((cost - bucket.tokens) / this.spec.perSecond),
      remaining: Math.floor(bucket.tokens),
      fullInSeconds: Math.ceil((this.spec.burst - bucket.tokens) / this.spec.perSecond),
    };
  }

  /** Gives back one token spent on `key` (an attempt that turned out not to count). */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.spec.burst, bucket.tokens + 1);
  }

  /** The seconds until `key` has a token (0: it has one now), without spending one. */
  peek(key: string, nowMs: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(this.spec.burst, bucket.tokens + ((nowMs - bucket.at) / 1000) * this.spec.perSecond);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / this.spec.perSecond);
  }

  /** Whether `key` has a bucket (for tests of eviction). */
  has(key: string): boolean {
    return this.buckets.has(key);
  }

  /** Evicts the least recently touched keys until `room` more fit. */
  private evictFor(room: number): void {
    for (const key of this.buckets.keys()) {
      if (this.buckets.size + room <= this.maxKeys) return;
      this.buckets.delete(key);
    }
  }
}

/**
 * The key of a client address for a per-address limit: an IPv4 address as it is (an
 * IPv4-mapped IPv6 one as its IPv4), an IPv6 address by its /64 — one subscriber's
 * allocation, so rotating through the 2^64 addresses of a /64 does not give 2^64 buckets.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The key of an account for the per-account sign-in limit: the e-mail, trimmed and lower-cased; null: none given. */
export function accountKey(email: unknown): string | null {
  if (typeof email !== 'string') return null;
  const key = email.trim().toLowerCase();
  return key === '' ? null : key.slice(0, 254);
}

/** One limit as the header fields name it: `"cred"`, `"ip"`, `"signin"`. */
export interface NamedState {
  name: string;
  spec: BucketSpec;
  state: BucketState;
}

/**
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers): a bucket
 * holding `burst` requests that refills at `perSecond` is quota q = burst over window
 * w = burst / perSecond seconds; r is what is left, t the seconds until it is full again.
 */
export function rateLimitFields(limits: NamedState[]): { policy: string; limit: string } {
  const policy = limits
    .map(({ name, spec }) => `"${name}";q=${spec.burst};w=${Math.max(1, Math.ceil(spec.burst / spec.perSecond))}`)
    .join(', ');
  const limit = limits.map(({ name, state }) => `"${name}";r=${state.remaining};t=${state.fullInSeconds}`).join(', ');
  return { policy, limit };
}
