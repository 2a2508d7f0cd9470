// GET /api/v1/openapi.json (docs/design/api-contract.md): the OpenAPI 3.1 document of the
// REST API, built from the contracts the routes were registered with (http/contract.ts).
// The routes are collected as Fastify registers them (an onRoute hook added before any
// surface), so the document is the route table: a route without a contract is left out,
// and test/api/openapi.test.ts names it. Built once, on the first request, when every
// route is in.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { route, type RouteContract } from './contract.js';
import { HTTP_STATUS } from './errors.js';
import type { ErrorCode } from '../domain/errors.js';

type Json = Record<string, unknown>;

/** The paths the document covers. */
export const API_PREFIX = '/api/v1/';

export interface CollectedRoute {
  method: string;
  url: string;
  contract: RouteContract | undefined;
}

/** Every /api/v1 route Fastify registers from now on, with its contract if it was declared. */
export function collectRoutes(app: FastifyInstance): CollectedRoute[] {
  const routes: CollectedRoute[] = [];
  app.addHook('onRoute', (options) => {
    if (!options.url.startsWith(API_PREFIX)) return;
    for (const method of [options.method].flat()) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: options.url, contract: options.config?.contract });
    }
  });
  return routes;
}

const ERROR_CODES = Object.keys(HTTP_STATUS) as [ErrorCode, ...ErrorCode[]];

/** Every failure's body (http/errors.ts, errorBody). */
const errorAnswer = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).describe('What went wrong, for a program to branch on (src/domain/errors.ts).'),
      message: z.string().describe('For whoever must act on it, a human or an agent.'),
      details: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('e.g. `field` (the input at fault), `retry_after_seconds`.'),
    }),
  })
  .describe('The one shape every failure answers with.');

/** What zod adds that says nothing to a reader (as the MCP surface trims it). */
function terse({ jsonSchema: json }: { jsonSchema: Json }): void {
  if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
  if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
  if (json.format === 'date-time') delete json.pattern;
}

/** A schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect): inputs as taken, answers as given. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: terse,
  }) as Json;
  return json;
}

/** `/api/v1/todos/:id` → `/api/v1/todos/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationId(c: RouteContract): string {
  const words = c.url
    .slice(API_PREFIX.length)
    .split('/')
    .map((part) => (part.startsWith(':') ? `by_${part.slice(1)}` : part))
    .join('_')
    .replace(/[^A-Za-z0-9_]/g, '_');
  return `${c.method.toLowerCase()}_${words}`;
}

function parameters(fields: z.ZodObject | undefined, where: 'path' | 'query'): Json[] {
  if (!fields) return [];
  const schema = jsonSchema(fields, 'input');
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

const ACCESS_TEXT: Record<RouteContract['access'], string> = {
  public: 'No credential.',
  human: 'A signed-in human’s API token (`sbt_…`); a workflow token is refused (403).',
  admin: 'An admin’s API token (`sbt_…`).',
  workflow: 'A human’s API token or a workflow token of that human.',
};

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

function operation(c: RouteContract): Json {
  const responses: Json = {};
  for (const [status, answer] of Object.entries(c.answers)) {
    responses[status] = {
      description: status === '201' ? 'Created.' : 'OK.',
      content: { 'application/json': { schema: jsonSchema(answer, 'output') } },
    };
  }
  responses['400'] = ref('InvalidArgument');
  if (c.access !== 'public') Object.assign(responses, { 401: ref('Unauthenticated'), 403: ref('Forbidden') });
  if (c.params) responses['404'] = ref('NotFound');
  Object.assign(responses, { 429: ref('TooManyRequests'), 503: ref('Unavailable'), default: ref('Error') });
  const body = c.body ? jsonSchema(c.body, 'input') : undefined;
  return {
    operationId: operationId(c),
    summary: c.summary,
    description: `Access: ${ACCESS_TEXT[c.access]}`,
    tags: [c.tag],
    'x-switchboard-access': c.access,
    security: c.access === 'public' ? [] : [{ bearer: [] }],
    parameters: [...parameters(c.params, 'path'), ...parameters(c.query, 'query')],
    ...(body
      ? {
          requestBody: {
            required: Array.isArray(body.required) && body.required.length > 0,
            content: { 'application/json': { schema: body } },
          },
        }
      : {}),
    responses,
  };
}

function errorResponse(description: string, retry = false): Json {
  return {
    description,
    ...(retry ? { headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } } } : {}),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

/** The OpenAPI 3.1 document of the declared routes, in registration order. */
export function openApiDocument(routes: readonly CollectedRoute[], version: string): Json {
  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  for (const { contract } of routes) {
    if (!contract) continue;
    const path = openApiPath(contract.url);
    paths[path] = { ...paths[path], [contract.method.toLowerCase()]: operation(contract) };
    tags.add(contract.tag);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard',
      version,
      description:
        'A durable work queue and doorbell for AI agents. Every failure answers `{"error": {"code", "message", ' +
        '"details"?}}`; see docs/api.md.',
    },
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token, `Authorization: Bearer sbt_…` (`switchboard login`, or POST /api/v1/auth/login). ' +
            'The board’s session cookie is not accepted on /api/v1. With SWITCHBOARD_AUTH=off every request ' +
            'is the admin.',
        },
      },
      schemas: { Error: jsonSchema(errorAnswer, 'output') },
      responses: {
        InvalidArgument: errorResponse('`invalid_argument`: the input is malformed; `details.field` names it.'),
        Unauthenticated: errorResponse('`unauthenticated`: no credential, or a bad, revoked or expired one.'),
        Forbidden: errorResponse('`forbidden`: the credential may not do this.'),
        NotFound: errorResponse('`not_found`: nothing by that id for this caller (another’s answers the same).'),
        TooManyRequests: errorResponse('`resource_exhausted`: a rate limit or quota; retry after Retry-After.', true),
        Unavailable: errorResponse('`unavailable` / `admission_unavailable`: retry after Retry-After.', true),
        Error: errorResponse(
          'Any other failure: `conflict`, `failed_precondition`, `deferred`, `queue_full`, `queue_changed`, ' +
            '`entry_not_found` (409/404), `internal` (500).',
        ),
      },
    },
  };
}

/** GET /api/v1/openapi.json: the document of `routes`, built on the first request. */
export function openApiRoute(app: FastifyInstance, routes: readonly CollectedRoute[], version: string): void {
  let document: Json | null = null;
  route(
    app,
    {
      method: 'GET',
      url: '/api/v1/openapi.json',
      summary: 'This document: the REST API’s contract, OpenAPI 3.1.',
      tag: 'meta',
      access: 'public',
      answers: { 200: z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }) },
    },
    async () => (document ??= openApiDocument(routes, version)),
  );
}
