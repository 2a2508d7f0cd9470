// The verb table of the MCP surface and its gate: tools/list shows the implemented verbs
// the endpoint is granted plus the self verbs; a call to a verb outside the grant is
// `forbidden` before anything runs.

import { z } from 'zod';
import { AppError } from '../../domain/errors.js';
import { allVerbs, SELF_VERBS } from '../../domain/verbs.js';
import { admissionVerbs } from './admission.js';
import { createVerbs } from './create.js';
import { doorbellVerbs } from './doorbell.js';
import { drainVerbs } from './drain.js';
import { hookVerbs } from './hooks.js';
import { eventVerbs, quarantineVerbs, ruleVerbs, webhookVerbs } from './webhooks.js';
import { messageVerbs } from './messages.js';
import { presenceVerbs } from './presence.js';
import { selfVerbs } from './self.js';
import type { ToolAnnotations, Verb } from './types.js';

export type { Verb, VerbContext } from './types.js';

const VERBS: ReadonlyMap<string, Verb> = new Map(
  [
    ...drainVerbs,
    ...admissionVerbs,
    ...createVerbs,
    ...messageVerbs,
    ...selfVerbs,
    ...doorbellVerbs,
    ...hookVerbs,
    ...webhookVerbs,
    ...ruleVerbs,
    ...eventVerbs,
    ...quarantineVerbs,
    ...presenceVerbs,
  ].map((v) => [v.name, v]),
);
const SELF: ReadonlySet<string> = new Set(SELF_VERBS);

/**
 * The verbs that act on the caller's own MCP session, and why, for a stateless request
 * (MCP 2026-07-28), which has none: they are left out of its tools/list and refused with
 * `failed_precondition` when called anyway (docs/design/mcp-surface.md).
 */
const MESSAGES_NEED_A_SESSION = {
  why: 'messages are queued into one MCP session',
  instead: 'open a 2025-11-25 session (initialize, then pass its Mcp-Session-Id) to read them',
};
const SESSION_VERBS: ReadonlyMap<string, { why: string; instead: string }> = new Map([
  ['next_message', MESSAGES_NEED_A_SESSION],
  ['ack_message', MESSAGES_NEED_A_SESSION],
  [
    'test_doorbell',
    {
      why: "the doorbell rings an MCP session's notification stream",
      instead: 'wait for work with claim_next {wait_seconds} instead',
    },
  ],
]);
const GRANTABLE: ReadonlySet<string> = new Set(allVerbs());

type ObjectSchema = { type: 'object'; [key: string]: unknown };

export interface ToolDescription {
  name: string;
  description: string;
  inputSchema: ObjectSchema;
  /** MCP 2025-06-18: a successful result's structuredContent conforms to it. */
  outputSchema: ObjectSchema;
  /** MCP 2025-06-18: read-only, destructive, idempotent, open-world hints. */
  annotations: ToolAnnotations;
}

/**
 * What zod adds that says nothing to a reader: the ±2^53 bounds of an integer without
 * bounds of its own, and the regular expression beside a `date-time` format.
 */
function terse({ jsonSchema: json }: { jsonSchema: Record<string, unknown> }): void {
  if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
  if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
  if (json.format === 'date-time') delete json.pattern;
}

/**
 * A schema as JSON Schema, for what it takes (`io: 'input'`): for an output schema that
 * is every answer it parses, with any field it does not name allowed, so a client
 * checking answers keeps working when an answer gains a field.
 */
function jsonSchema(schema: z.ZodType): ObjectSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input', override: terse }) as Record<
    string,
    unknown
  >;
  return { ...json, type: 'object' };
}

function describe(verb: Verb): ToolDescription {
  return {
    name: verb.name,
    description: verb.description,
    inputSchema: jsonSchema(verb.input),
    outputSchema: jsonSchema(verb.output),
    annotations: { ...verb.annotations },
  };
}

// Converted once: the schemas are constants of the code.
const DESCRIPTIONS: ReadonlyMap<string, ToolDescription> = new Map(
  [...VERBS.values()].map((v) => [v.name, describe(v)]),
);

export function isGranted(grantedVerbs: readonly string[], name: string): boolean {
  return SELF.has(name) || grantedVerbs.includes(name) || (name === 'admission_status' && drains(grantedVerbs));
}

/** docs/design/admission.md: admission_status comes with the claim verbs, whichever way they were granted. */
const drains = (verbs: readonly string[]) => verbs.includes('claim') || verbs.includes('claim_next');

/** The tools this endpoint may call, in the table's order; `stateless`: those that need no session. */
export function toolsFor(grantedVerbs: readonly string[], stateless = false): ToolDescription[] {
  return [...DESCRIPTIONS.values()].filter(
    (d) => isGranted(grantedVerbs, d.name) && !(stateless && SESSION_VERBS.has(d.name)),
  );
}

/**
 * The verb to run, or the AppError that refuses it (before any side effect); `stateless`:
 * the request has no session, so a session verb is `failed_precondition` saying why.
 */
export function verbFor(grantedVerbs: readonly string[], name: string, stateless = false): Verb {
  if (!VERBS.has(name) && !SELF.has(name) && !GRANTABLE.has(name)) {
    throw new AppError('not_found', `${name}: no such tool`, { verb: name });
  }
  if (!isGranted(grantedVerbs, name)) {
    throw new AppError('forbidden', `${name}: this endpoint is not granted this verb`, { verb: name });
  }
  const verb = VERBS.get(name);
  if (!verb) throw new AppError('not_found', `${name}: not available on this server yet`, { verb: name });
  const session = stateless ? SESSION_VERBS.get(name) : undefined;
  if (session !== undefined) {
    throw new AppError(
      'failed_precondition',
      `${name}: ${session.why}, and this request has none (MCP 2026-07-28 is stateless); ${session.instead}`,
      { verb: name, needs: 'session' },
    );
  }
  return verb;
}
