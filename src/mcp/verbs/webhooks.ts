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
import { setRulesInput } from '../../domain/routing.js';
import {
  clearTrust,
  getRules,
  setRules,
  setTrust,
  setTrustInput,
  testRules,
  testRulesInput,
} from '../../routing/manage.js';
import {
  discardInput,
  discardQuarantine,
  listQuarantine,
  listQuarantineInput,
  releaseQuarantine,
  showQuarantine,
} from '../../routing/quarantine.js';
import {
  quarantineDiscardOut,
  quarantineListOut,
  quarantineReleaseOut,
  quarantineShowOut,
  rulesOut,
  rulesShowOut,
  rulesTestOut,
  trustSetOut,
} from '../../contract/routing.js';
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
import { DESTROYS, READS, SETTLES, WRITES } from './types.js';

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
    ...(ctx.routing ? { routing: ctx.routing, workOrderSeconds: ctx.routing.workOrderSeconds } : {}),
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

const setRulesArgs = setRulesInput.extend({ webhook_id: webhookId });
const testRulesArgs = testRulesInput.extend({ webhook_id: webhookId });
const setTrustArgs = setTrustInput.extend({
  webhook_id: webhookId,
  actors: setTrustInput.shape.actors
    .nullable()
    .describe("Provider logins or ids whose events route; anyone else's are quarantined. null: no gate."),
});

/** Routing rules on the agent's own webhooks (docs/design/routing.md), in the webhooks family. */
export const ruleVerbs: Verb[] = [
  {
    name: 'get_webhook_rules',
    annotations: READS,
    description: "A webhook's routing rules (first match wins), its default action and its trusted actors.",
    input: webhookIdInput,
    output: rulesShowOut,
    run: (ctx, args) => getRules(deps(ctx), owner(ctx), parseInput(webhookIdInput, args).webhook_id),
  },
  {
    name: 'set_webhook_rules',
    annotations: SETTLES,
    description:
      "Replace a webhook's rules: [{name, when, then}], `when` a CEL expression over {event: {provider, type, " +
      'actor, headers}, payload}, `then` {action: "route", queue?, endpoints?, title?, kind?, priority?, once?} ' +
      '| {action: "drop"} | {action: "quarantine"}. A compile error names rules[i].field and the position.',
    input: setRulesArgs,
    output: rulesOut,
    run: (ctx, args) => {
      const { webhook_id: id, ...rest } = parseInput(setRulesArgs, args);
      return setRules(deps(ctx), owner(ctx), id, rest);
    },
  },
  {
    name: 'test_webhook_rules',
    annotations: READS,
    description:
      "Dry-run the rules (saved, or a draft in `rules`) on a payload, or on the webhook's last deliveries: per " +
      'delivery the rule that matched, the action and the todos it would make. Nothing is written.',
    input: testRulesArgs,
    output: rulesTestOut,
    run: (ctx, args) => {
      const { webhook_id: id, ...rest } = parseInput(testRulesArgs, args);
      return testRules(deps(ctx), owner(ctx), id, rest);
    },
  },
  {
    name: 'set_trusted_actors',
    annotations: SETTLES,
    description:
      'Set who may wake agents through a webhook: events a rule would route, from anyone else, are quarantined ' +
      'for a human. actors: null turns the gate off.',
    input: setTrustArgs,
    output: trustSetOut,
    run: (ctx, args) => {
      const { webhook_id: id, actors, when } = parseInput(setTrustArgs, args);
      if (actors === null) return clearTrust(deps(ctx), owner(ctx), id);
      return setTrust(deps(ctx), owner(ctx), id, { actors, ...(when === undefined ? {} : { when }) });
    },
  },
];

const quarantineId = z.string().min(1).check(maxLength(64)).describe('The quarantine item id, `qi_…`.');
const quarantineIdInput = z.strictObject({ id: quarantineId });
const discardArgs = discardInput.extend({ id: quarantineId });

/**
 * The quarantine family: a classifier agent reviews its own endpoint's held events. Never
 * in the basic grant or in the webhooks family: releasing a stranger's event to agents is
 * the decision the gate exists to leave to a human.
 */
export const quarantineVerbs: Verb[] = [
  {
    name: 'list_quarantine',
    annotations: READS,
    description: "Your webhooks' held events (untrusted actors), newest first, with what each would make.",
    input: listQuarantineInput,
    output: quarantineListOut,
    run: (ctx, args) => listQuarantine(deps(ctx), owner(ctx), args),
  },
  {
    name: 'get_quarantined',
    annotations: READS,
    description: 'One held event with the payload that would reach an agent if released.',
    input: quarantineIdInput,
    output: quarantineShowOut,
    run: (ctx, args) => showQuarantine(deps(ctx), owner(ctx), parseInput(quarantineIdInput, args).id),
  },
  {
    name: 'release_quarantined',
    annotations: { ...WRITES, idempotentHint: false },
    description: 'Route a held event as if its actor were trusted: its todos are made and rung.',
    input: quarantineIdInput,
    output: quarantineReleaseOut,
    run: (ctx, args) => releaseQuarantine(deps(ctx), owner(ctx), parseInput(quarantineIdInput, args).id, owner(ctx)),
  },
  {
    name: 'discard_quarantined',
    // Not destructive: the item stays, discarded, with its reason; a second discard is a conflict.
    annotations: WRITES,
    description: 'Discard a held event with a reason; nothing is made, nothing rings.',
    input: discardArgs,
    output: quarantineDiscardOut,
    run: (ctx, args) => {
      const { id, reason } = parseInput(discardArgs, args);
      return discardQuarantine(deps(ctx), owner(ctx), id, owner(ctx), { reason });
    },
  },
];
