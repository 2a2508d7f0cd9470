// Session messages (docs/design/message-queue.md): provenance, limits, input validation
// and the capacity precedence. Pure.
//
// Message states:
//
//   add ──▶ pending ──reserve (head, one at a time)──▶ in flight ──ack_message──▶ (deleted)
//             ▲  │                                          │
//             │  └──remove / Clear all──▶ (deleted)         │  write failed, stream closed,
//             └─────────────────────────────────────────────┘  no ack within the ack timeout
//   session ends (DELETE, idle expiry, revoke): every row, in flight or not ──▶ (deleted)
//
// An in-flight row is hidden from status and from counts shown to people, and only its
// ack or the purge deletes it.

import { z } from 'zod';
import { maxLength } from './issues.js';

/** Who queued a message. Derived from the authenticated caller, never from a client field. */
export const QUEUED_BY = ['user', 'agent', 'workflow', 'server'] as const;
export type QueuedBy = (typeof QUEUED_BY)[number];

/** 16 KiB: a long instruction fits; a document belongs in a todo's body. */
export const CONTENT_BYTES = 16 * 1024;

/** The install default when neither the environment nor an admin sets the capacity. */
export const DEFAULT_MAX_PER_SESSION = 10;

export const content = z
  .string()
  .refine((s) => s.trim() !== '', 'must not be empty')
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
  .refine((s) => Buffer.byteLength(s, 'utf8') <= CONTENT_BYTES, `must be at most ${CONTENT_BYTES} bytes`);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a client-sent entry id can name a row at all (anything else is simply not found). */
export function isEntryId(value: string): boolean {
  return UUID.test(value);
}

// Lengths in UTF-16 code units, as zod 3 counted them (src/domain/issues.ts).
const sessionId = z.string().min(1, 'must not be empty').check(maxLength(200));
const entryId = z.string().min(1, 'must not be empty').check(maxLength(200));

export const addInput = z.strictObject({ content });
export const editInput = z.strictObject({ entry_id: entryId, content });
export const removeInput = z.strictObject({ entry_id: entryId });
export const reorderInput = z.strictObject({ entry_ids: z.array(entryId).max(10_000) });
/** send_message's arguments, as tools/list shows them. */
export const sendInput = z.strictObject({
  session_id: sessionId.describe('The target session id, `ms_…`.'),
  content: content.describe(`The message text, at most ${CONTENT_BYTES} bytes.`),
});
/** ack_message's arguments, as tools/list shows them. */
export const ackInput = z.strictObject({ message_id: entryId.describe('The `message_id` from the message’s meta.') });
export const capacityInput = z
  .strictObject({
    // Not `.int()`: zod 4's refuses whole numbers beyond 2^53, which this field always took.
    max_per_session: z
      .number()
      .refine(Number.isInteger, 'must be a whole number')
      .min(0, 'must be 0 (unlimited) or more'),
  })
  .partial();

/** Where the effective capacity comes from. */
export type CapacitySource = 'default' | 'setting' | 'environment';

export interface Capacity {
  /** The persisted install setting, or null when none is saved (or it is corrupt). */
  configured: number | null;
  /** What admissions use: positive = max rows per session (reserved included), 0 = unlimited. */
  effective: number;
  source: CapacitySource;
  /** A valid environment value decides: writes naming the capacity are refused. */
  locked: boolean;
}

export type EnvCapacity = { ok: true; value: number } | { ok: false; text: string } | null;

/**
 * An environment value: a whole number, where anything not positive means unlimited (0),
 * as docs/design/message-queue.md ("Capacity") keeps for compatibility. Unset → null;
 * anything else → invalid.
 */
export function parseEnvCapacity(text: string | undefined): EnvCapacity {
  if (text === undefined || text.trim() === '') return null;
  const trimmed = text.trim();
  if (!/^[+-]?\d{1,15}$/.test(trimmed)) return { ok: false, text };
  const n = Number(trimmed);
  return { ok: true, value: n > 0 ? n : 0 };
}

/** A persisted value: a non-negative whole number, else null (corrupt). */
export function parseStoredCapacity(value: unknown): number | null {
  const n = (value as { max_per_session?: unknown } | null)?.max_per_session;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** Valid environment > persisted setting > default 10. */
export function resolveCapacity(env: number | null, configured: number | null): Capacity {
  if (env !== null) return { configured, effective: env, source: 'environment', locked: true };
  if (configured !== null) return { configured, effective: configured, source: 'setting', locked: false };
  return { configured, effective: DEFAULT_MAX_PER_SESSION, source: 'default', locked: false };
}
