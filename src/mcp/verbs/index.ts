// The verb table of the MCP surface and its gate: tools/list shows the implemented verbs
// the endpoint is granted plus the self verbs; a call to a verb outside the grant is
// `forbidden` before anything runs.

import { z } from 'zod/v4';
import { AppError } from '../../domain/errors.js';
import { allVerbs, SELF_VERBS } from '../../domain/verbs.js';
import { admissionVerbs } from './admission.js';
import { createVerbs } from './create.js';
import { doorbellVerbs } from './doorbell.js';
import { drainVerbs } from './drain.js';
import { hookVerbs } from './hooks.js';
import { messageVerbs } from './messages.js';
import { presenceVerbs } from './presence.js';
import { selfVerbs } from './self.js';
import type { Verb } from './types.js';

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
    ...presenceVerbs,
  ].map((v) => [v.name, v]),
);
const SELF: ReadonlySet<string> = new Set(SELF_VERBS);
const GRANTABLE: ReadonlySet<string> = new Set(allVerbs());

export interface ToolDescription {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
}

function describe(verb: Verb): ToolDescription {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(verb.input, { io: 'input' }) as Record<string, unknown>;
  return { name: verb.name, description: verb.description, inputSchema: { ...schema, type: 'object' } };
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

/** The tools this endpoint may call, in the table's order. */
export function toolsFor(grantedVerbs: readonly string[]): ToolDescription[] {
  return [...DESCRIPTIONS.values()].filter((d) => isGranted(grantedVerbs, d.name));
}

/** The verb to run, or the AppError that refuses it (before any side effect). */
export function verbFor(grantedVerbs: readonly string[], name: string): Verb {
  if (!VERBS.has(name) && !SELF.has(name) && !GRANTABLE.has(name)) {
    throw new AppError('not_found', `${name}: no such tool`, { verb: name });
  }
  if (!isGranted(grantedVerbs, name)) {
    throw new AppError('forbidden', `${name}: this endpoint is not granted this verb`, { verb: name });
  }
  const verb = VERBS.get(name);
  if (!verb) throw new AppError('not_found', `${name}: not available on this server yet`, { verb: name });
  return verb;
}
