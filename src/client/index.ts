// `import { Switchboard } from 'switchboard/client'`: a typed client of the REST API
// (docs/api.md, "Typed client"). Its types are inferred from the zod schemas the server's
// routes are declared with (./types.ts), so they follow the server's contract. It speaks
// fetch alone and loads none of the server's code.
//
// Retries: a 429 (rate limit, quota) or 503 (database unavailable) is retried after the
// answer's Retry-After, at most `retries` times and only when the wait is at most
// `maxRetryWaitSeconds`; both refusals come before anything is written, so a retried push
// cannot make a todo twice (an idempotency_key makes that certain). Anything else that
// fails throws a SwitchboardError carrying the API's `{code, message, details}`.
//
// A class, not a bag of functions: it holds one server, one token and the retry policy,
// and users of an SDK expect `new`.

import { setTimeout as sleep } from 'node:timers/promises';
import type * as T from './types.js';

export type * from './types.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface SwitchboardOptions {
  /** The server, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** An API token, `sbt_…` (`switchboard login`, or a workflow token for pushing only). */
  token: string;
  /** Retries of a 429 or 503; default 3. 0: never retry. */
  retries?: number;
  /** The longest Retry-After worth waiting for; a longer one throws at once. Default 30 s. */
  maxRetryWaitSeconds?: number;
  /** Each request's deadline; default 30 s. */
  timeoutMs?: number;
  /** Another fetch (a proxy agent, a test stub). */
  fetch?: typeof fetch;
}

/** The API's `{"error": {code, message, details}}`, or a transport failure (code `unavailable`, status 0). */
export class SwitchboardError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly details: Record<string, unknown> | undefined,
    /** From the answer's Retry-After, when it had one. */
    readonly retryAfterSeconds: number | null,
  ) {
    super(message);
    this.name = 'SwitchboardError';
  }
}

/** Without a Retry-After: 1 s, 2 s, 4 s … */
const FALLBACK_WAIT_SECONDS = 1;

/** Seconds from a Retry-After header: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const seg = encodeURIComponent;

function query(params: Record<string, unknown> | undefined): string {
  const entries = Object.entries(params ?? {}).filter(([, v]) => v !== undefined);
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}`;
}

export class Switchboard {
  readonly url: string;
  readonly #token: string;
  readonly #retries: number;
  readonly #maxWait: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: SwitchboardOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.#token = options.token;
    this.#retries = options.retries ?? 3;
    this.#maxWait = options.maxRetryWaitSeconds ?? 30;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? fetch;
  }

  /** Any /api/v1 route: for what the groups below do not cover. */
  async request<R>(method: Method, path: string, body?: unknown): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      const response = await this.#send(method, path, body);
      const text = await response.text();
      const parsed: unknown = text === '' ? null : parseJson(text);
      if (response.ok) return parsed as R;
      const error = toError(method, path, response, parsed);
      const retryable = response.status === 429 || response.status === 503;
      const wait = error.retryAfterSeconds ?? FALLBACK_WAIT_SECONDS * 2 ** attempt;
      if (!retryable || attempt >= this.#retries || wait > this.#maxWait) throw error;
      await sleep(wait * 1000);
    }
  }

  async #send(method: Method, path: string, body: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${this.#token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.#fetch(`${this.url}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new SwitchboardError(`${method} ${this.url}${path}: ${reason}`, 'unavailable', 0, undefined, null);
    }
  }

  readonly todos = {
    /** Push one todo; `created: false` when its idempotency_key found an earlier one. */
    push: (endpoint: string, todo: T.NewTodo) =>
      this.request<T.TodoPushed>('POST', `/api/v1/endpoints/${seg(endpoint)}/todos`, todo),
    /** Push up to 1,000 todos at once: all or nothing. */
    pushMany: (endpoint: string, todos: T.NewTodo[]) =>
      this.request<T.TodosPushed>('POST', `/api/v1/endpoints/${seg(endpoint)}/todos`, { todos }),
    list: (endpoint: string, filter: T.TodoListQuery = {}) =>
      this.request<T.TodoList>('GET', `/api/v1/endpoints/${seg(endpoint)}/todos${query(filter)}`),
    show: (id: string) => this.request<T.TodoShown>('GET', `/api/v1/todos/${seg(id)}`),
    retry: (id: string) => this.request<T.TodoOne>('POST', `/api/v1/todos/${seg(id)}/retry`),
    cancel: (id: string) => this.request<T.TodoOne>('POST', `/api/v1/todos/${seg(id)}/cancel`),
    /** Cancel or retry by filter; `dry_run: true` only counts. */
    bulk: (endpoint: string, action: T.BulkAction) =>
      this.request<T.BulkActionResult>('POST', `/api/v1/endpoints/${seg(endpoint)}/todos/bulk`, action),
  };

  readonly endpoints = {
    /** A new endpoint: its credential is in the answer, and only there. */
    vend: (input: T.NewEndpoint) => this.request<T.EndpointVended>('POST', '/api/v1/endpoints', input),
    list: () => this.request<T.EndpointList>('GET', '/api/v1/endpoints'),
    show: (ref: string) => this.request<T.EndpointShown>('GET', `/api/v1/endpoints/${seg(ref)}`),
    update: (ref: string, settings: T.EndpointSettings) =>
      this.request<T.EndpointOne>('PATCH', `/api/v1/endpoints/${seg(ref)}`, settings),
    rotate: (ref: string, input: T.RotateCredential = {}) =>
      this.request<T.EndpointRotated>('POST', `/api/v1/endpoints/${seg(ref)}/rotate`, input),
    revoke: (ref: string) => this.request<T.EndpointRevoked>('POST', `/api/v1/endpoints/${seg(ref)}/revoke`),
    delete: (ref: string) => this.request<T.Deleted>('DELETE', `/api/v1/endpoints/${seg(ref)}`),
  };

  readonly webhooks = {
    create: (endpoint: string, input: T.NewWebhook) =>
      this.request<T.WebhookCreated>('POST', `/api/v1/endpoints/${seg(endpoint)}/webhooks`, input),
    list: (endpoint: string) => this.request<T.WebhookList>('GET', `/api/v1/endpoints/${seg(endpoint)}/webhooks`),
    /** A new ingest URL; the old one stops at once. */
    rotate: (id: string) => this.request<T.WebhookRotated>('POST', `/api/v1/webhooks/${seg(id)}/rotate`),
    setSecret: (id: string, input: T.WebhookSecret = {}) =>
      this.request<T.WebhookSecretSet>('POST', `/api/v1/webhooks/${seg(id)}/secret`, input),
    delete: (id: string) => this.request<T.Deleted>('DELETE', `/api/v1/webhooks/${seg(id)}`),
  };

  readonly events = {
    list: (endpoint: string, filter: T.EventListQuery = {}) =>
      this.request<T.EventList>('GET', `/api/v1/endpoints/${seg(endpoint)}/events${query(filter)}`),
    show: (id: string) => this.request<T.EventShown>('GET', `/api/v1/events/${seg(id)}`),
    replay: (id: string) => this.request<T.EventReplayed>('POST', `/api/v1/events/${seg(id)}/replay`),
  };

  readonly schedules = {
    list: (endpoint: string) => this.request<T.ScheduleList>('GET', `/api/v1/endpoints/${seg(endpoint)}/schedules`),
    create: (endpoint: string, input: T.NewSchedule) =>
      this.request<T.ScheduleOne>('POST', `/api/v1/endpoints/${seg(endpoint)}/schedules`, input),
    show: (endpoint: string, id: string) =>
      this.request<T.ScheduleShown>('GET', `/api/v1/endpoints/${seg(endpoint)}/schedules/${seg(id)}`),
    audit: (endpoint: string, id: string) =>
      this.request<T.ScheduleAuditList>('GET', `/api/v1/endpoints/${seg(endpoint)}/schedules/${seg(id)}/audit`),
    update: (endpoint: string, id: string, patch: T.SchedulePatch) =>
      this.request<T.ScheduleOne>('PATCH', `/api/v1/endpoints/${seg(endpoint)}/schedules/${seg(id)}`, patch),
    delete: (endpoint: string, id: string) =>
      this.request<T.ScheduleDeleted>('DELETE', `/api/v1/endpoints/${seg(endpoint)}/schedules/${seg(id)}`),
  };

  /** Budgets (admission policies); `endpoint` is a slug or id, the scope `endpoint:<it>`. */
  readonly budgets = {
    list: () => this.request<T.BudgetList>('GET', '/api/v1/admission'),
    show: (endpoint: string, queue: string) =>
      this.request<T.BudgetDetail>('GET', `/api/v1/admission/${seg(`endpoint:${endpoint}`)}/${seg(queue)}`),
    set: (endpoint: string, queue: string, policy: T.BudgetPolicy) =>
      this.request<T.BudgetSet>('PUT', `/api/v1/admission/${seg(`endpoint:${endpoint}`)}/${seg(queue)}`, policy),
    clear: (endpoint: string, queue: string) =>
      this.request<T.BudgetCleared>('DELETE', `/api/v1/admission/${seg(`endpoint:${endpoint}`)}/${seg(queue)}`),
  };

  readonly hooks = {
    list: (endpoint: string) => this.request<T.HookList>('GET', `/api/v1/endpoints/${seg(endpoint)}/notify-hooks`),
    create: (endpoint: string, input: T.NewHook) =>
      this.request<T.HookWithSecret>('POST', `/api/v1/endpoints/${seg(endpoint)}/notify-hooks`, input),
    rotate: (endpoint: string, id: string, input: { immediate?: boolean } = {}) =>
      this.request<T.HookWithSecret>(
        'POST',
        `/api/v1/endpoints/${seg(endpoint)}/notify-hooks/${seg(id)}/rotate`,
        input,
      ),
    delete: (endpoint: string, id: string) =>
      this.request<T.HookDeleted>('DELETE', `/api/v1/endpoints/${seg(endpoint)}/notify-hooks/${seg(id)}`),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function toError(method: Method, path: string, response: Response, parsed: unknown): SwitchboardError {
  const wait = retryAfterSeconds(response.headers.get('retry-after'));
  const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  if (typeof error?.code !== 'string') {
    const code = response.status >= 500 ? 'unavailable' : 'internal';
    return new SwitchboardError(
      `${method} ${path}: HTTP ${response.status}, not a Switchboard answer`,
      code,
      response.status,
      undefined,
      wait,
    );
  }
  const message = typeof error.message === 'string' ? error.message : error.code;
  const details =
    typeof error.details === 'object' && error.details !== null
      ? (error.details as Record<string, unknown>)
      : undefined;
  return new SwitchboardError(`${message} (${error.code})`, error.code, response.status, details, wait);
}
