// The typed client's types, inferred from the schemas the server's routes are declared with
// (src/contract/ for answers, the use cases' input schemas for bodies), so a change to
// the server's contract changes these or fails to compile: they cannot drift. Type-only
// imports: the client loads none of the server's code at run time.

import type { z } from 'zod';
import type {
  budgetClearedOut,
  budgetDetailOut,
  budgetListOut,
  budgetOut,
  budgetSetOut,
  policyShape,
  queueStatusOut as budgetStatusOut,
} from '../contract/budgets.js';
import type {
  credentialOut,
  endpointListOut,
  endpointOneOut,
  endpointOut,
  endpointRevokedOut,
  endpointShowOut,
  rotatedOut,
} from '../contract/endpoints.js';
import type { doorbellReportOut, doorbellTestStartedOut } from '../contract/doorbell.js';
import type { hookDeletedOut, hookListOut, hookOut, hookWithSecret } from '../contract/hooks.js';
import type { capacityOut, entryOut, entryRemovedOut, queueClearedOut, queueStatusOut } from '../contract/messages.js';
import type {
  humanAuditOut,
  humanCreatedOut,
  humanDeletedOut,
  humanListOut,
  humanOut,
  humanUpdatedOut,
  oidcUnlinkedOut,
  passwordChangedOut,
  resetIssuedOut,
  signedInOut,
  tokenListOut,
  tokenMintedOut,
  tokenOut,
  whoamiOut,
} from '../contract/people.js';
import type { presenceOut } from '../contract/presence.js';
import type {
  quarantineDiscardOut,
  quarantineItemOut,
  quarantineListOut,
  quarantineReleaseOut,
  quarantineShowOut,
  rulesOut,
  rulesShowOut,
  rulesTestOut,
  trustOut,
  trustSetOut,
} from '../contract/routing.js';
import type {
  scheduleAuditListOut,
  scheduleAuditOut,
  scheduleDeletedOut,
  scheduleListOut,
  scheduleOneOut,
  scheduleOut,
  scheduleShowOut,
} from '../contract/schedules.js';
import type { attemptOut, todoFullOut } from '../contract/shapes.js';
import type {
  bulkActionOut,
  todoListOut,
  todoOneOut,
  todoPushedOut,
  todoShowOut,
  todosPushedOut,
} from '../contract/todos.js';
import type {
  eventListOut,
  eventOut,
  eventReplayOut,
  eventShowOut,
  eventSummaryOut,
  webhookCreatedOut,
  webhookListOut,
  webhookOut,
  webhookRotatedOut,
  webhookSecretOut,
} from '../contract/webhooks.js';
import type { endpointSettingsInput, rotateInput, vendInput } from '../domain/endpoint.js';
import type { createTodoInput, listTodosInput } from '../domain/todo.js';
import type { createHookInput } from '../hooks/manage.js';
import type { createScheduleInput, patchScheduleInput } from '../schedules/input.js';
import type { bulkActionInput } from '../todos/bulk-actions.js';
import type { listEventsInput } from '../webhooks/events.js';
import type { createWebhookInput, webhookSecretInput } from '../webhooks/manage.js';

type Out<T extends z.ZodType> = z.output<T>;
type In<T extends z.ZodType> = z.input<T>;

export type Todo = Out<typeof todoFullOut>;
export type TodoAttempt = Out<typeof attemptOut>;
export type NewTodo = In<typeof createTodoInput>;
export type TodoListQuery = In<typeof listTodosInput>;
export type TodoPushed = Out<typeof todoPushedOut>;
export type TodosPushed = Out<typeof todosPushedOut>;
export type TodoList = Out<typeof todoListOut>;
export type TodoShown = Out<typeof todoShowOut>;
export type TodoOne = Out<typeof todoOneOut>;
export type BulkAction = In<typeof bulkActionInput>;
export type BulkActionResult = Out<typeof bulkActionOut>;

export type Endpoint = Out<typeof endpointOut>;
export type NewEndpoint = In<typeof vendInput>;
export type EndpointSettings = In<typeof endpointSettingsInput>;
export type RotateCredential = In<typeof rotateInput>;
export type EndpointVended = Out<typeof credentialOut>;
export type EndpointRotated = Out<typeof rotatedOut>;
export type EndpointList = Out<typeof endpointListOut>;
export type EndpointShown = Out<typeof endpointShowOut>;
export type EndpointOne = Out<typeof endpointOneOut>;
export type EndpointRevoked = Out<typeof endpointRevokedOut>;

export type Webhook = Out<typeof webhookOut>;
export type NewWebhook = In<typeof createWebhookInput>;
export type WebhookSecret = In<typeof webhookSecretInput>;
export type WebhookCreated = Out<typeof webhookCreatedOut>;
export type WebhookList = Out<typeof webhookListOut>;
export type WebhookRotated = Out<typeof webhookRotatedOut>;
export type WebhookSecretSet = Out<typeof webhookSecretOut>;

export type EventSummary = Out<typeof eventSummaryOut>;
export type Event = Out<typeof eventOut>;
export type EventListQuery = In<typeof listEventsInput>;
export type EventList = Out<typeof eventListOut>;
export type EventShown = Out<typeof eventShowOut>;
export type EventReplayed = Out<typeof eventReplayOut>;

export type Schedule = Out<typeof scheduleOut>;
export type ScheduleAudit = Out<typeof scheduleAuditOut>;
export type NewSchedule = In<typeof createScheduleInput>;
export type SchedulePatch = In<typeof patchScheduleInput>;
export type ScheduleOne = Out<typeof scheduleOneOut>;
export type ScheduleList = Out<typeof scheduleListOut>;
export type ScheduleShown = Out<typeof scheduleShowOut>;
export type ScheduleAuditList = Out<typeof scheduleAuditListOut>;
export type ScheduleDeleted = Out<typeof scheduleDeletedOut>;

export type BudgetPolicy = In<typeof policyShape>;
export type BudgetList = Out<typeof budgetListOut>;
export type BudgetDetail = Out<typeof budgetDetailOut>;
export type BudgetSet = Out<typeof budgetSetOut>;
export type BudgetCleared = Out<typeof budgetClearedOut>;

export type Hook = Out<typeof hookOut>;
export type NewHook = In<typeof createHookInput>;
export type HookWithSecret = Out<typeof hookWithSecret>;
export type HookList = Out<typeof hookListOut>;
export type HookDeleted = Out<typeof hookDeletedOut>;

export interface Deleted {
  deleted: true;
}

export type Human = Out<typeof humanOut>;
export type ApiToken = Out<typeof tokenOut>;
export type SignedIn = Out<typeof signedInOut>;
export type WhoAmI = Out<typeof whoamiOut>;
export type TokenList = Out<typeof tokenListOut>;
export type TokenMinted = Out<typeof tokenMintedOut>;
export type HumanList = Out<typeof humanListOut>;
export type HumanCreated = Out<typeof humanCreatedOut>;
export type HumanUpdated = Out<typeof humanUpdatedOut>;
export type HumanDeleted = Out<typeof humanDeletedOut>;
export type ResetIssued = Out<typeof resetIssuedOut>;
export type HumanAudit = Out<typeof humanAuditOut>;
export type HumanAuditEntry = HumanAudit['entries'][number];
export type OidcUnlinked = Out<typeof oidcUnlinkedOut>;
export type PasswordChanged = Out<typeof passwordChangedOut>;

export type Presence = Out<typeof presenceOut>;

export type DoorbellTestStarted = Out<typeof doorbellTestStartedOut>;
export type DoorbellReport = Out<typeof doorbellReportOut>;

export type QueuedMessage = Out<typeof entryOut>;
export type MessageQueue = Out<typeof queueStatusOut>;
export type MessageQueueCleared = Out<typeof queueClearedOut>;
export type MessageRemoved = Out<typeof entryRemovedOut>;
export type MessageCapacity = Out<typeof capacityOut>;

export type BudgetStatus = Out<typeof budgetStatusOut>;
export type Budget = Out<typeof budgetOut>;

export type RoutingRules = Out<typeof rulesOut>;
export type RoutingRulesShown = Out<typeof rulesShowOut>;
export type RoutingTrust = Out<typeof trustOut>;
export type RoutingTrustSet = Out<typeof trustSetOut>;
export type RoutingRulesTested = Out<typeof rulesTestOut>;
export type QuarantineItem = Out<typeof quarantineItemOut>;
export type QuarantineList = Out<typeof quarantineListOut>;
export type QuarantineShown = Out<typeof quarantineShowOut>;
export type QuarantineReleased = Out<typeof quarantineReleaseOut>;
export type QuarantineDiscarded = Out<typeof quarantineDiscardOut>;
