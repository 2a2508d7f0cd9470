// The REST contract's one declaration per route (docs/design/api-contract.md): a route on
// /api/v1 is registered with `route(app, contract, handler)`, where the contract names its
// method, URL, who may call it, and the zod schemas of its path parameters, query, body and
// answers. The contract rides on the route's Fastify config, so the OpenAPI document
// (http/openapi.ts) is built from the route table itself and a route registered without
// one shows up as missing (test/api/openapi.test.ts names it).
//
// What this does not do: validate. The use cases parse their input with these same
// schemas (so a refusal keeps its field-by-field message), and answers are not checked on
// the way out; the contract tests check them against real answers.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';

/**
 * Who may call a route, as http/auth.ts's `authenticate` decides it: `public` takes no
 * credential; `human` any signed-in human's token (human kind); `admin` an admin's;
 * `workflow` a human token or a workflow token of that human.
 */
export type RouteAccess = 'public' | 'human' | 'admin' | 'workflow';

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Path parameters, query strings: flat objects of named fields. */
type Fields = z.ZodObject;

export interface RouteContract {
  method: RouteMethod;
  /** Fastify's form: `/api/v1/todos/:id`. */
  url: string;
  /** One line: what the route does. */
  summary: string;
  /** The group it is listed under (`todos`, `endpoints`, …). */
  tag: string;
  access: RouteAccess;
  params?: Fields;
  query?: Fields;
  /** The JSON body; absent: the route reads none. */
  body?: z.ZodType;
  /** Each success status and the shape of its answer. Failures share one shape (http/errors.ts). */
  answers: Partial<Record<200 | 201 | 204, z.ZodType>>;
  /** Overrides the host's body cap (http/app.ts). */
  bodyLimit?: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `route`: the declaration the OpenAPI document is built from. */
    contract?: RouteContract;
  }
}

type ParamsOf<C extends RouteContract> = C['params'] extends Fields ? z.output<C['params']> : Record<string, never>;

/** A handler of a declared route: its path parameters typed from the contract; query and body are the use case's to parse. */
export type ContractHandler<C extends RouteContract> = (
  request: FastifyRequest<{ Params: ParamsOf<C>; Querystring: unknown; Body: unknown }>,
  reply: FastifyReply,
) => Promise<unknown>;

/** Registers `handler` for the route `contract` declares, with the declaration attached. */
export function route<C extends RouteContract>(app: FastifyInstance, contract: C, handler: ContractHandler<C>): void {
  app.route<{ Params: ParamsOf<C>; Querystring: unknown; Body: unknown }>({
    method: contract.method,
    url: contract.url,
    ...(contract.bodyLimit !== undefined ? { bodyLimit: contract.bodyLimit } : {}),
    config: { contract },
    handler,
  });
}
