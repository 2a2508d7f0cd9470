// The limits of /mcp (docs/design/mcp-surface.md, "Limits"): a token bucket per client
// address for requests that carry no well-formed credential or fail to authenticate, read
// before any database work; a token bucket per credential (endpoint) for every request;
// and the refusal both share with the live-session cap (the cap itself is counted in the
// database as a session opens, src/sessions). Every refusal is HTTP 429 with Retry-After
// and a JSON-RPC error whose message and `data` name the limit and its value.
// The buckets are per instance, like the operator API's (src/http/rate-limit.ts).

import type { FastifyReply } from 'fastify';
import type { McpConfig } from '../config/types.js';
import { RateLimiter, rateLimitFields, type NamedState } from '../http/rate-limit.js';

/** The JSON-RPC code of every limit refusal: the server-error code the SDK refuses requests with. */
export const LIMITED = -32000;

/**
 * What a client refused at the session cap (every session busy) is told to wait: a minute,
 * long enough for a wait to end or a session to end (DELETE /mcp, the idle sweep), short enough
 * that a fleet restarting after a crash gets its sessions back promptly.
 */
export const SESSION_CAP_RETRY_SECONDS = 60;

/** One refusal: the message and `data` of the JSON-RPC error, and the seconds to wait. */
export interface Refusal {
  message: string;
  data: Record<string, unknown> & { limit: string; retry_after_seconds: number };
}

export class McpLimits {
  readonly #unauthenticated: RateLimiter;
  readonly #perCredential: RateLimiter;

  constructor(
    private readonly settings: Pick<McpConfig, 'sessionsPerEndpoint' | 'perCredential' | 'unauthenticatedPerIp'>,
    private readonly nowMs: () => number,
  ) {
    this.#unauthenticated = new RateLimiter(settings.unauthenticatedPerIp);
    this.#perCredential = new RateLimiter(settings.perCredential);
  }

  /** The live sessions one endpoint may hold. */
  get sessionsPerEndpoint(): number {
    return this.settings.sessionsPerEndpoint;
  }

  /**
   * Before a well-formed credential is looked up: a refusal when this address has spent
   * its unauthenticated bucket, so a flood of guesses costs no database read.
   */
  beforeLookup(ip: string): Refusal | null {
    return this.#unauthenticatedRefusal(this.#unauthenticated.peek(ip, this.nowMs()));
  }

  /** A request with no well-formed credential, or one that failed: spends from the address's bucket. */
  failed(ip: string): Refusal | null {
    return this.#unauthenticatedRefusal(this.#unauthenticated.take(ip, this.nowMs()));
  }

  /**
   * A batch of `messages` that no bucket of this credential could ever pay for (more than
   * its burst): the message of its refusal, a JSON-RPC invalid request, not a 429, since
   * retrying it would never help. Null when it may be charged.
   */
  oversizedBatch(messages: number): string | null {
    const { burst } = this.settings.perCredential;
    if (messages <= burst) return null;
    return (
      `Invalid Request: a batch of ${messages} messages is more than this credential's /mcp burst ` +
      `(SWITCHBOARD_MCP_BURST = ${burst}); send at most ${burst} per POST`
    );
  }

  /**
   * Every authenticated request: spends from the credential's bucket, one token per
   * JSON-RPC message, so a batch of N pays N (docs/design/mcp-surface.md, "Limits").
   */
  request(endpointId: string, messages = 1): { state: NamedState; refusal: Refusal | null } {
    const spec = this.settings.perCredential;
    const state = { name: 'mcp', spec, state: this.#perCredential.check(endpointId, this.nowMs(), messages) };
    const wait = state.state.waitSeconds;
    if (wait === 0) return { state, refusal: null };
    return {
      state,
      refusal: {
        message:
          `Too many requests: this credential's /mcp rate limit (SWITCHBOARD_MCP_RATE = ${spec.perSecond}/s, ` +
          `SWITCHBOARD_MCP_BURST = ${spec.burst}) is spent; retry in ${wait} s`,
        data: { limit: 'SWITCHBOARD_MCP_RATE', rate: spec.perSecond, burst: spec.burst, retry_after_seconds: wait },
      },
    };
  }

  /** The refusal of an initialize at the session cap when no session could be evicted. */
  sessionCap(live: number, max: number): Refusal {
    const wait = SESSION_CAP_RETRY_SECONDS;
    return {
      message:
        `Too many sessions: this endpoint has ${live} live MCP sessions, its limit ` +
        `(SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT = ${max}), and each is busy (an open stream, a waiting call ` +
        `or a claim), so none was closed for this one; end one with DELETE /mcp and retry in ${wait} s`,
      data: { limit: 'SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT', max, live, retry_after_seconds: wait },
    };
  }

  #unauthenticatedRefusal(wait: number): Refusal | null {
    if (wait === 0) return null;
    const spec = this.settings.unauthenticatedPerIp;
    return {
      message:
        `Too many requests: too many /mcp requests from this address without a valid credential ` +
        `(SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP = ${spec.perSecond}/s, ` +
        `SWITCHBOARD_MCP_UNAUTH_BURST_PER_IP = ${spec.burst}); retry in ${wait} s`,
      data: {
        limit: 'SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP',
        rate: spec.perSecond,
        burst: spec.burst,
        retry_after_seconds: wait,
      },
    };
  }
}

/** Answers a refusal: 429, Retry-After (and the RateLimit fields when a bucket was spent), a JSON-RPC error. */
export function refuse(reply: FastifyReply, refusal: Refusal, state?: NamedState): FastifyReply {
  if (state) {
    const fields = rateLimitFields([state]);
    void reply.header('RateLimit-Policy', fields.policy).header('RateLimit', fields.limit);
  }
  return reply
    .status(429)
    .header('Retry-After', String(refusal.data.retry_after_seconds))
    .send({ jsonrpc: '2.0', error: { code: LIMITED, message: refusal.message, data: refusal.data }, id: null });
}
