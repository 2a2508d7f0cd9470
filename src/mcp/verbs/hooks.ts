// The hooks family: the endpoint's own notify hooks (outbound webhooks fired when work is
// ready, for consumers with no live session such as cron jobs or `claude -p`). Never
// granted by default. The signing secret is shown once, on create and rotate.

import { z } from 'zod/v4';
import { HookGuard } from '../../hooks/guard.js';
import { createHook, deleteHook, listHooks, rotateHook, MAX_HOOKS, type HookDeps } from '../../hooks/manage.js';
import type { Verb, VerbContext } from './types.js';

/** Without a configured guard (some tests), the strictest one: https only, no private targets. */
const STRICT = new HookGuard({ allowHttp: false, allowCidrs: [] });

function deps(ctx: VerbContext): HookDeps {
  return { db: ctx.todos.db, guard: ctx.hookGuard ?? STRICT };
}

const owner = (ctx: VerbContext) => ({ id: ctx.endpoint.id, queues: ctx.endpoint.queues });
const hookId = z.string().describe('The hook id, `nh_…`.');

export const hookVerbs: Verb[] = [
  {
    name: 'create_notify_hook',
    description:
      `Add an HTTPS URL that is POSTed a signed notification (Standard Webhooks) whenever a todo becomes ready ` +
      `on this endpoint (at most ${MAX_HOOKS}). Answers the signing secret once: store it to verify ` +
      'webhook-signature. Held while the endpoint is clocked out unless ignore_presence.',
    input: z.strictObject({
      url: z.string().describe('An https:// URL on a public address.'),
      queues: z.array(z.string()).optional().describe('Only these granted queues (default: all).'),
      ignore_presence: z.boolean().optional().describe('Also notify while the endpoint is clocked out.'),
    }),
    run: (ctx, args) => createHook(deps(ctx), owner(ctx), args),
  },
  {
    name: 'list_notify_hooks',
    description: "List this endpoint's notify hooks with their health (no secrets), and how many more it may add.",
    input: z.strictObject({}),
    run: (ctx, args) => listHooks(deps(ctx), owner(ctx), args),
  },
  {
    name: 'rotate_notify_hook',
    description:
      'Give a notify hook a new signing secret (answered once) and re-enable it; the old secret keeps ' +
      'signing alongside for 24 h.',
    input: z.strictObject({ hook_id: hookId }),
    run: (ctx, args) => rotateHook(deps(ctx), owner(ctx), args),
  },
  {
    name: 'delete_notify_hook',
    description: 'Delete one of this endpoint’s notify hooks.',
    input: z.strictObject({ hook_id: hookId }),
    run: (ctx, args) => deleteHook(deps(ctx), owner(ctx), args),
  },
];
