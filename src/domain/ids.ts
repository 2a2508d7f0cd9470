// Identifiers: a short type prefix and a ULID, so ids sort by creation time, are safe in
// URLs, and say what they name in a log line (td_ todo, ep_ endpoint, hu_ human,
// tk_ API token, wh_ webhook, ev_ webhook event, rg_ doorbell ring, dt_ doorbell test, sc_ schedule, oc_ OAuth
// client, og_ OAuth grant).
// MCP session ids (ms_) are the exception: a session id is what a client presents on every
// request after initialize, so it comes from a CSPRNG and says nothing about when it was
// made or which ids came before it (docs/design/mcp-surface.md, "Sessions"). Nothing may
// order sessions by id: their order is created_at.
// A stateless MCP request (revision 2026-07-28, which has no sessions) acts under an `mr_`
// id of the same kind, made for that one request and naming no mcp_sessions row
// (docs/design/mcp-surface.md, "MCP 2026-07-28: stateless requests").

import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * A source of fractions in [0, 1) for the ULIDs' random characters, from a pool of CSPRNG
 * bytes refilled `size` bytes at a time. The ulid package's own default draws
 * `randomBytes(1)` for each of a ULID's 16 random characters: 45–59 µs an id on the
 * development machine under load, against 0.7 µs from the pool (bench/README.md, "ids"),
 * and every create, ring and attempt makes one. A byte ÷ 256 is what the default returns
 * too, so the characters are as uniform as before.
 */
export function randomPool(size: number): () => number {
  let bytes = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at >= bytes.length) {
      bytes = randomBytes(size);
      at = 0;
    }
    return (bytes[at++] as number) / 256;
  };
}

const ulid = monotonicFactory(randomPool(4096));

export type IdPrefix = 'td' | 'ep' | 'hu' | 'tk' | 'wh' | 'ev' | 'rg' | 'dt' | 'sc' | 'oc' | 'og' | 'rl' | 'qi' | 'gr';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

/** Crockford's base32, the alphabet of the other ids, so every id matches one pattern. */
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** 26 base32 characters of 128 random bits (the first character carries the top 3 bits). */
function randomText(): string {
  let bits = 0n;
  for (const byte of randomBytes(16)) bits = (bits << 8n) | BigInt(byte);
  let text = '';
  for (let i = 0; i < 26; i++) {
    text = (BASE32[Number(bits & 31n)] as string) + text;
    bits >>= 5n;
  }
  return text;
}

/** `ms_` and 128 random bits: unguessable and in no order. */
export function newSessionId(): string {
  return `ms_${randomText()}`;
}

/** `mr_` and 128 random bits: the session id of one stateless request, new for each. */
export function newStatelessId(): string {
  return `mr_${randomText()}`;
}

/** Whether a session id names one stateless request rather than an MCP session. */
export function isStatelessId(sessionId: string): boolean {
  return sessionId.startsWith('mr_');
}

const ID_PATTERN = /^[a-z]{2}_[0-9A-HJKMNP-TV-Z]{26}$/;

export function isId(prefix: IdPrefix | 'ms' | 'mr', text: string): boolean {
  return ID_PATTERN.test(text) && text.startsWith(`${prefix}_`);
}
