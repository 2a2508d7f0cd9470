// The webhooks and events families (docs/design/intake.md, "MCP verbs"): an agent manages
// its own endpoint's webhooks — the intake URLs that put work on its queues — and reads
// what they received, and replays it. Neither family is in the basic grant: a webhook
// lets anyone holding its URL (and secret) put work on the agent's queues. Every call is
// scoped to the caller's endpoint; another endpoint's webhook or event answers not_found.

import { z } from 'zod';
import { maxLength } from '../../domain/issues.js';
import { parseInput } from '../../domain/todo.js';
import { listEventsInput, listEventsOf, replayEvent, showEvent } from '../../webhooks/events.js';
import {
  createWebhookInput,
  createWebhookOn,
  deleteWebhook,
  listWebhooksOf,
  rotateWebhook,
  setWebhookSecret,
  webhookSecretInput,
} from '../../webhooks/manage.js';
import {
  eventListOut,
  eventReplayOut,
  eventShowOut,
  webhookCreatedOut,
  webhookListOut,
  webhookRotatedOut,
  webhookSecretOut,
} from '../../contract/webhooks.js';
import type { Verb, VerbContext } from './types.js';
import { DESTROYS, READS, WRITES } from './types.js';

const owner = (ctx: VerbContext) => ({ endpointId: ctx.endpoint.id });

function deps(ctx: VerbContext) {
  const quotas = ctx.todos.quotas;
  return {
    db: ctx.todos.db,
    publicUrl: ctx.publicUrl,
    defaultLeaseSeconds: ctx.todos.defaultLeaseSeconds,
    ...(quotas ? { quotas } : {}),
    ...(ctx.todos.idempotencyWindowSeconds === undefined
      ? {}
      : { idempotencyWindowSeconds: ctx.todos.idempotencyWindowSeconds }),
    ...(ctx.todos.metrics ? { metrics: ctx.todos.metrics } : {}),
    ...(ctx.keyring ? { keyring: ctx.keyring } : {}),
  };
}

const webhookId = z.string().min(1).check(maxLength(64)).describe('The webhook id, `wh_…`.');
const eventId = z.string().min(1).check(maxLength(64)).describe('The event id, `ev_…`.');
const noArgs = z.strictObject({});
const webhookIdInput = z.strictObject({ webhook_id: webhookId });
const eventIdInput = z.strictObject({ event_id: eventId });
const setSecretInput = webhookSecretInput.extend({ webhook_id: webhookId });

export const webhookVerbs: Verb[] = [
  {
    name: 'create_webhook',
    annotations: WRITES,
    description:
      'Open an intake URL that turns deliveries into todos on one of your queues. provider: token (the URL is ' +
      'the credential), github, gitlab, gitea, stripe, slack or standard (the delivery must carry that ' +
      "provider's signature). Answers the URL, and for a signed provider a generated signing secret, once.",
    input: createWebhookInput,
    output: webhookCreatedOut,
    run: (ctx, args) => {
      const data = parseInput(createWebhookInput, args);
      return createWebhookOn(deps(ctx), ctx.endpoint, data);
    },
  },
  {
    name: 'list_webhooks',
    annotations: READS,
    description: 'List your webhooks (never their URLs or secrets).',
    input: noArgs,
    output: webhookListOut,
    run: async (ctx, args) => {
      parseInput(noArgs, args);
      return { webhooks: await listWebhooksOf(deps(ctx), ctx.endpoint.id) };
    },
  },
  {
    name: 'rotate_webhook',
    annotations: { ...DESTROYS, idempotentHint: false },
    description: 'Give a webhook a new URL (answered once); the old URL stops working at once.',
    input: webhookIdInput,
    output: webhookRotatedOut,
    run: (ctx, args) => rotateWebhook(deps(ctx), owner(ctx), parseInput(webhookIdInput, args).webhook_id),
  },
  {
    name: 'set_webhook_secret',
    // Not destructive: the replaced secret keeps verifying through the rotation grace.
    annotations: WRITES,
    description:
      "Set a signed webhook's secret to the one its provider issued (Stripe, Slack), or without secret generate " +
      'one (answered once). The replaced secret keeps verifying until previous_valid_until.',
    input: setSecretInput,
    output: webhookSecretOut,
    run: (ctx, args) => {
      const { webhook_id: id, ...rest } = parseInput(setSecretInput, args);
      return setWebhookSecret(deps(ctx), owner(ctx), id, rest);
    },
  },
  {
    name: 'delete_webhook',
    annotations: DESTROYS,
    description: 'Delete one of your webhooks; its URL stops at once, its events stay in the history.',
    input: webhookIdInput,
    output: z.object({ deleted: z.literal(true) }),
    run: (ctx, args) => deleteWebhook(deps(ctx), owner(ctx), parseInput(webhookIdInput, args).webhook_id),
  },
];

export const eventVerbs: Verb[] = [
  {
    name: 'list_webhook_events',
    annotations: READS,
    description:
      'What your webhooks received, newest first: provider, event type, actor, whether it verified, and the ' +
      'todos it made.',
    input: listEventsInput,
    output: eventListOut,
    run: (ctx, args) => listEventsOf(deps(ctx), ctx.endpoint.id, parseInput(listEventsInput, args)),
  },
  {
    name: 'get_webhook_event',
    annotations: READS,
    description: 'One event with the headers (no signatures) and payload its delivery carried.',
    input: eventIdInput,
    output: eventShowOut,
    run: (ctx, args) => showEvent(deps(ctx), owner(ctx), parseInput(eventIdInput, args).event_id),
  },
  {
    name: 'replay_webhook_event',
    annotations: { ...WRITES, idempotentHint: false },
    description:
      "Make an event's todo again from its stored delivery, as a new event linked to it (replay_of): for work " +
      'to be done again after a fix.',
    input: eventIdInput,
    output: eventReplayOut,
    run: (ctx, args) => replayEvent(deps(ctx), owner(ctx), parseInput(eventIdInput, args).event_id),
  },
];
