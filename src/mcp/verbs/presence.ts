// Presence self verbs: need no grant and act only on the caller's endpoint. While the
// endpoint is out it hears no doorbell and its notify hooks are held; pull, leases and
// everything else work as always. Clocking in with waiting work sends one digest.

import { clockIn, clockInInput, clockOut, clockOutInput, presenceOf } from '../../presence/manage.js';
import { parseInput } from '../../domain/todo.js';
import { presenceOut } from '../../contract/presence.js';
import { noArguments } from '../../contract/shapes.js';
import type { Verb } from './types.js';
import { READS, SETTLES, WRITES } from './types.js';

export const presenceVerbs: Verb[] = [
  {
    name: 'clock_in',
    annotations: WRITES,
    description:
      'Mark this endpoint in (doorbells on). Off shift it lasts `for` (default 1h, at most 8h) or until the ' +
      'shift starts; with work waiting, one digest doorbell summarises it.',
    input: clockInInput,
    output: presenceOut,
    run: (ctx, args) => clockIn({ db: ctx.todos.db }, ctx.endpoint.id, args),
  },
  {
    name: 'clock_out',
    annotations: SETTLES,
    description:
      'Mark this endpoint out until its next shift starts (or until clock_in): no doorbells, hooks held. ' +
      'Pull with claim_next still works.',
    input: clockOutInput,
    output: presenceOut,
    run: (ctx, args) => clockOut({ db: ctx.todos.db }, ctx.endpoint.id, args),
  },
  {
    name: 'presence',
    annotations: READS,
    description:
      'Whether this endpoint is in or out, why (agent, operator, shift, default), until when, its shift ' +
      'and how many todos are pending.',
    input: noArguments,
    output: presenceOut,
    async run(ctx, args) {
      parseInput(noArguments, args);
      return presenceOf({ db: ctx.todos.db }, ctx.endpoint.id);
    },
  },
];
