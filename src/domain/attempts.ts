// What an agent leaves on an attempt when it ends it (docs/design/todos.md, "What an
// attempt leaves"), and the lease token that lets any session settle a claim ("Lease
// tokens"): their argument schemas, shared by complete, fail and release, and the one
// rule that cuts a long summary instead of refusing it.

import { z } from 'zod';
import { maxLength } from './issues.js';

export const ATTEMPT_NOTE_LIMITS = {
  /** What is kept of a summary: a paragraph or two for the next agent, not a log. */
  summaryBytes: 2048,
  /** What is accepted at all: longer is cut to summaryBytes; past this it is refused. */
  summaryInputBytes: 64 * 1024,
  /** A URL, a commit, a path: a reference to the work, never the work. */
  artifactBytes: 512,
} as const;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const noNul = (s: string) => !s.includes('\u0000');

/** The default of SWITCHBOARD_ATTEMPTS_KEPT_PER_TODO (src/config/schema.ts says why). */
export const DEFAULT_ATTEMPTS_KEPT = 25;

export const leaseTokenArg = z
  .string()
  .min(1)
  .check(maxLength(128))
  .describe(
    'The lease_token your claim answered. With it any session of this endpoint, or a request without one, ' +
      'may settle the claim; without it only the session that claimed may.',
  );

export const summaryArg = z
  .string()
  .refine(noNul, 'must not contain NUL characters')
  .refine(
    (s) => bytes(s) <= ATTEMPT_NOTE_LIMITS.summaryInputBytes,
    `must be at most ${ATTEMPT_NOTE_LIMITS.summaryInputBytes} bytes`,
  )
  .describe(
    `What this attempt did or found, for whoever claims the todo next (kept to ${ATTEMPT_NOTE_LIMITS.summaryBytes} ` +
      'bytes; longer is cut and flagged).',
  );

export const artifactArg = z
  .string()
  .min(1)
  .refine(noNul, 'must not contain NUL characters')
  .refine(
    (s) => bytes(s) <= ATTEMPT_NOTE_LIMITS.artifactBytes,
    `must be at most ${ATTEMPT_NOTE_LIMITS.artifactBytes} bytes`,
  )
  .describe(
    `A reference to what this attempt produced: a URL, a commit (at most ${ATTEMPT_NOTE_LIMITS.artifactBytes} bytes).`,
  );

export interface AttemptNote {
  summary: string | null;
  summaryTruncated: boolean;
  artifact: string | null;
}

/** The note as stored: the summary cut to summaryBytes at a character boundary, and flagged when cut. */
export function attemptNote(summary: string | undefined, artifact: string | undefined): AttemptNote {
  const note = { summary: summary ?? null, summaryTruncated: false, artifact: artifact ?? null };
  if (summary === undefined || bytes(summary) <= ATTEMPT_NOTE_LIMITS.summaryBytes) return note;
  let used = 0;
  let cut = '';
  for (const ch of summary) {
    used += bytes(ch);
    if (used > ATTEMPT_NOTE_LIMITS.summaryBytes) break;
    cut += ch;
  }
  return { ...note, summary: cut, summaryTruncated: true };
}
