// The hooks family: the endpoint's own notify hooks (outbound webhooks fired when work is
// ready, for consumers with no live session such as cron jobs or `claude -p`). Never
// granted by default. The signing secret is shown once, on create and rotate.

import { HookGuard } from '../../hooks/guard.js';
import {
  createHook,
  createHookInput,
  deleteHook,
  hookIdInput,
  rotateHookInput,
  listHooks,
  listHooksInput,
  rotateHook,
  MAX_HOOKS,
  type HookDeps,
} from '../../hooks/manage.js';
import { hookDeletedOut, hookListOut, hookWithSecret } from '../../contract/hooks.js';
import type { Verb, VerbContext } from './types.js';
import { DESTROYS, READS, WRITES } from './types.js';

/** Without a configured guard (some tests), the strictest one: https only, no private targets. */
const STRICT = new HookGuard({ allowHttp: false, allowCidrs: [] });

function deps(ctx: VerbContext): HookDeps {
  const quotas = ctx.todos.quotas;
  return {
    db: ctx.todos.db,
    guard: ctx.hookGuard ?? STRICT,
    ...(quotas ? { quotas } : {}),
    ...(ctx.keyring ? { keyring: ctx.keyring } : {}),
  };
}

const owner = (ctx: VerbContext) => ({ id: ctx.endpoint.id, queues: ctx.endpoint.queues });

export const hookVerbs: Verb[] = [
  {
    name: 'create_notify_hook',
    annotations: WRITES,
    description:
      `Add an HTTPS URL that is POSTed a signed notification (Standard Webhooks) whenever a todo becomes ready ` +
      `on this endpoint (at most ${MAX_HOOKS}). Answers the signing secret once: store it to verify ` +
      'webhook-signature. Held while the endpoint is clocked out unless ignore_presence.',
    input: createHookInput,
    output: hookWithSecret,
    run: (ctx, args) => createHook(deps(ctx), owner(ctx), args),
  },
  {
    name: 'list_notify_hooks',
    annotations: READS,
    description: "List this endpoint's notify hooks with their health (no secrets), and how many more it may add.",
    input: listHooksInput,
    output: hookListOut,
    run: (ctx, args) => listHooks(deps(ctx), owner(ctx), args),
  },
  {
    name: 'rotate_notify_hook',
    annotations: { ...DESTROYS, idempotentHint: false },
    description:
      'Give a notify hook a new signing secret (answered once) and re-enable it; the old secret keeps ' +
      'signing alongside for 24 h, or with immediate: true stops signing at once.',
    input: rotateHookInput,
    output: hookWithSecret,
    run: (ctx, args) => rotateHook(deps(ctx), owner(ctx), args),
  },
  {
    name: 'delete_notify_hook',
    annotations: DESTROYS,
    description: 'Delete one of this endpoint’s notify hooks.',
    input: hookIdInput,
    output: hookDeletedOut,
    run: (ctx, args) => deleteHook(deps(ctx), owner(ctx), args),
  },
];
