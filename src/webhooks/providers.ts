// What a verified delivery means, per provider (docs/design/intake.md, "What a todo
// gets"): its event type (the todo's `kind`), a readable title, the actor, and the
// provider's delivery id (the dedup key; a hash of the body when the provider sends
// none). Also how the body is read (JSON, or Slack's form encoding) and which headers the
// event history keeps. Pure: no clock, no database.

import { createHash } from 'node:crypto';
import { invalidArgument } from '../domain/errors.js';
import type { Provider } from './verify.js';

/** What the history and the todo take from one delivery. */
export interface ProviderReading {
  kind: string | null;
  title: string;
  actor: string | null;
  /** The provider's id of this delivery, kept across its redeliveries; null: none sent. */
  deliveryId: string | null;
}

type Json = Record<string, unknown>;
export type HeaderReader = (name: string) => string | undefined;

/** The todo limits a reading must fit (LIMITS.titleChars, LIMITS.kindChars). */
const TITLE_CHARS = 200;
const KIND_CHARS = 64;
const ACTOR_CHARS = 200;

/** Headers the history never keeps: credentials and signatures (a stored one could be replayed). */
const SECRET_HEADERS = new Set([
  'authorization',
  'cookie',
  'x-hub-signature',
  'x-hub-signature-256',
  'x-gitea-signature',
  'x-forgejo-signature',
  'x-gogs-signature',
  'x-gitlab-token',
  'stripe-signature',
  'x-slack-signature',
  'webhook-signature',
  'x-api-key',
  'proxy-authorization',
]);

/** The request's headers as the history keeps them: lower-case names, no secret ones, first value of each. */
export function sanitizedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (SECRET_HEADERS.has(key) || value === undefined) continue;
    kept[key] = (Array.isArray(value) ? value[0] : value)?.slice(0, 1024) ?? '';
  }
  return kept;
}

/** The media type alone, lower-case: `application/json; charset=utf-8` → `application/json`. */
export function mediaType(contentType: string | undefined): string | null {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type ? type : null;
}

/**
 * The body as the provider sent it: JSON (any `…/json` or `…+json` type), or a form
 * (`application/x-www-form-urlencoded`, Slack's slash commands and interactions; a
 * `payload` field holding JSON is decoded, as Slack sends interactions). An empty body
 * with no content type is no payload. Anything else is refused naming the body.
 */
export function parseBody(contentType: string | null, raw: Buffer): unknown {
  if (raw.length === 0 && contentType === null) return undefined;
  if (contentType !== null && /^application\/([a-z0-9.+-]*\+)?json$/.test(contentType)) {
    try {
      return JSON.parse(raw.toString('utf8')) as unknown;
    } catch {
      throw invalidArgument('body', 'is not valid JSON');
    }
  }
  if (contentType === 'application/x-www-form-urlencoded') {
    const form: Json = {};
    for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) form[k] = v;
    if (typeof form.payload === 'string') {
      try {
        form.payload = JSON.parse(form.payload) as unknown;
      } catch {
        // A form field that merely happens to be called payload stays text.
      }
    }
    return form;
  }
  throw invalidArgument('body', `content type ${contentType ?? '(none)'} is not accepted: send JSON or a form`);
}

const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | null =>
  typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null;

function clip(text: string, max: number): string {
  const flat = text.replace(/[\r\n\t]+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** SHA-256 of the body: the dedup key when the provider names no delivery. */
export function bodyHash(raw: Buffer): string {
  return `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

/** `owner/repo#42: title (opened by alice)`, and the other shapes GitHub and Gitea share. */
function forgeTitle(event: string, body: Json, actor: string | null): string {
  const repo = str(obj(body.repository).full_name) ?? 'repository';
  const action = str(body.action);
  const by = actor ? ` by ${actor}` : '';
  const doing = action ? `${action}${by}` : by.trim();
  const item = (thing: Json, prefix = '') =>
    `${repo}#${str(thing.number) ?? '?'}: ${prefix}${str(thing.title) ?? ''}${doing ? ` (${doing})` : ''}`;
  if (event === 'pull_request' || event === 'pull_request_review') return item(obj(body.pull_request));
  if (event === 'issues') return item(obj(body.issue));
  if (event === 'issue_comment' || event === 'pull_request_review_comment') {
    const target = Object.keys(obj(body.issue)).length > 0 ? obj(body.issue) : obj(body.pull_request);
    return `${repo}#${str(target.number) ?? '?'}: comment on ${str(target.title) ?? ''}${actor ? ` (by ${actor})` : ''}`;
  }
  if (event === 'push') {
    const ref = (str(body.ref) ?? '').replace(/^refs\/heads\//, '');
    return `${repo}: push to ${ref}${by}`;
  }
  return `${repo}: ${event}${action ? `.${action}` : ''}${by}`;
}

function github(h: HeaderReader, body: Json): ProviderReading {
  const event = h('x-github-event') ?? 'unknown';
  const action = str(body.action);
  const actor = str(obj(body.sender).login);
  return {
    kind: action ? `${event}.${action}` : event,
    title: forgeTitle(event, body, actor),
    actor,
    deliveryId: h('x-github-delivery') ?? null,
  };
}

function gitea(h: HeaderReader, body: Json): ProviderReading {
  const event = h('x-forgejo-event') ?? h('x-gitea-event') ?? 'unknown';
  const action = str(body.action);
  const sender = obj(body.sender);
  const actor = str(sender.login) ?? str(sender.username);
  return {
    kind: action ? `${event}.${action}` : event,
    title: forgeTitle(event, body, actor),
    actor,
    deliveryId: h('x-forgejo-delivery') ?? h('x-gitea-delivery') ?? null,
  };
}

function gitlab(h: HeaderReader, body: Json): ProviderReading {
  const kind = str(body.object_kind) ?? str(body.event_name) ?? 'unknown';
  const attrs = obj(body.object_attributes);
  const project = str(obj(body.project).path_with_namespace) ?? 'project';
  const actor = str(obj(body.user).username) ?? str(body.user_username);
  const by = actor ? ` by ${actor}` : '';
  const step = str(attrs.action) ?? (kind === 'pipeline' ? str(attrs.status) : null);
  let title: string;
  if (kind === 'pipeline') {
    title = `${project}: pipeline #${str(attrs.id) ?? '?'} ${str(attrs.status) ?? ''} on ${str(attrs.ref) ?? '?'}${by}`;
  } else if (kind === 'merge_request' || kind === 'issue') {
    const sep = kind === 'merge_request' ? '!' : '#';
    title = `${project}${sep}${str(attrs.iid) ?? '?'}: ${str(attrs.title) ?? ''}${step ? ` (${step}${by})` : ''}`;
  } else if (kind === 'note') {
    title = `${project}: comment${by}: ${str(attrs.note) ?? ''}`;
  } else if (kind === 'push' || kind === 'tag_push') {
    title = `${project}: ${kind.replace('_', ' ')} to ${(str(body.ref) ?? '').replace(/^refs\/(heads|tags)\//, '')}${by}`;
  } else {
    title = `${project}: ${kind}${by}`;
  }
  return {
    kind: step ? `${kind}.${step}` : kind,
    title,
    actor,
    deliveryId: h('x-gitlab-event-uuid') ?? null,
  };
}

function stripe(_h: HeaderReader, body: Json): ProviderReading {
  const type = str(body.type) ?? 'unknown';
  const object = obj(obj(body.data).object);
  return {
    kind: type,
    title: `Stripe: ${type}${str(object.id) ? ` ${str(object.id)}` : ''}`,
    actor: str(body.account),
    deliveryId: str(body.id),
  };
}

function slack(_h: HeaderReader, body: Json): ProviderReading {
  if (str(body.type) === 'event_callback') {
    const event = obj(body.event);
    const type = str(event.type) ?? 'unknown';
    const subtype = str(event.subtype);
    const actor = str(event.user) ?? str(event.bot_id);
    const where = str(event.channel) ? ` in ${str(event.channel)}` : '';
    const text = str(event.text);
    return {
      kind: subtype ? `${type}.${subtype}` : type,
      title: `Slack: ${type}${where}${actor ? ` from ${actor}` : ''}${text ? `: ${text}` : ''}`,
      actor,
      deliveryId: str(body.event_id),
    };
  }
  if (str(body.command)) {
    const actor = str(body.user_id);
    return {
      kind: 'slash_command',
      title: `Slack: ${str(body.command)} ${str(body.text) ?? ''}${str(body.user_name) ? ` (by ${str(body.user_name)})` : ''}`,
      actor,
      deliveryId: null,
    };
  }
  const interaction = obj(body.payload);
  const type = str(interaction.type) ?? str(body.type) ?? 'unknown';
  const actor = str(obj(interaction.user).id);
  return { kind: type, title: `Slack: ${type}${actor ? ` from ${actor}` : ''}`, actor, deliveryId: null };
}

function standard(h: HeaderReader, body: Json): ProviderReading {
  const type = str(body.type);
  const id = str(obj(body.data).id);
  return {
    kind: type,
    title: `${type ?? 'Webhook delivery'}${id ? ` ${id}` : ''}`,
    actor: null,
    deliveryId: h('webhook-id') ?? null,
  };
}

const READERS: Record<Exclude<Provider, 'token'>, (h: HeaderReader, body: Json) => ProviderReading> = {
  github,
  gitea,
  gitlab,
  stripe,
  slack,
  standard,
};

/** The reading of a signed provider's delivery, clipped to what a todo stores. */
export function readDelivery(
  provider: Exclude<Provider, 'token'>,
  header: HeaderReader,
  body: unknown,
): ProviderReading {
  const r = READERS[provider](header, obj(body));
  return {
    kind: r.kind === null ? null : clip(r.kind, KIND_CHARS),
    title: clip(r.title, TITLE_CHARS) || 'Webhook delivery',
    actor: r.actor === null ? null : clip(r.actor, ACTOR_CHARS),
    deliveryId: r.deliveryId,
  };
}

/** Slack's url_verification handshake: the challenge to echo, or null when this is not one. */
export function slackChallenge(body: unknown): string | null {
  const b = obj(body);
  return str(b.type) === 'url_verification' && typeof b.challenge === 'string' ? b.challenge : null;
}
