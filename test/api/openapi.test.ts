// Pins the REST contract (docs/design/api-contract.md): GET /api/v1/openapi.json is a valid
// OpenAPI 3.1 document that covers every /api/v1 route Fastify has, each with its access,
// inputs, answers and the one error shape.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createHost } from '../../src/http/app.js';
import { Readiness } from '../../src/http/readiness.js';
import { API_PREFIX, openApiPath } from '../../src/http/openapi.js';
import { registerSurfaces } from '../../src/main.js';
import { apiHarness, expectStatus } from './app.js';

const h = await apiHarness('api_openapi');

/** Every /api/v1 route of the app as `serve` builds it, from Fastify's own onRoute, HEAD aside. */
async function routeTable(): Promise<string[]> {
  const s = h.services;
  const app = createHost({
    log: s.log,
    trustProxy: s.config.trustProxy,
    publicUrl: s.config.publicUrl,
    allowedHosts: s.config.allowedHosts,
    connections: s.config.connections,
  });
  const seen: string[] = [];
  app.addHook('onRoute', (options) => {
    for (const method of [options.method].flat()) {
      if (options.url.startsWith(API_PREFIX) && method !== 'HEAD') seen.push(`${method} ${options.url}`);
    }
  });
  registerSurfaces(app, s, new Readiness());
  await app.ready();
  await app.close();
  return seen;
}

const res = await h.get('/api/v1/openapi.json');
expectStatus(res, 200, 'openapi.json');
const doc = res.body;
const operations = new Map<string, Record<string, unknown>>();
for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)) {
  for (const [method, op] of Object.entries(item)) operations.set(`${method.toUpperCase()} ${path}`, op);
}

test('the document is valid OpenAPI 3.1', async () => {
  assert.equal(doc.openapi, '3.1.0');
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 4000));
});

test('every /api/v1 route Fastify registers is in the document (a route without route() is named here)', async () => {
  const table = await routeTable();
  assert.ok(table.length > 50, `the route table looks too small: ${table.length}`);
  const missing = table.filter((r) => {
    const [method = '', url = ''] = r.split(' ');
    return !operations.has(`${method} ${openApiPath(url)}`);
  });
  assert.deepEqual(missing, [], `declare these with route() (src/http/contract.ts): ${missing.join(', ')}`);
  assert.equal(operations.size, table.length, 'the document lists no route the app does not have');
});

test('each operation says who may call it, and answers failures in the one error shape', () => {
  for (const [name, op] of operations) {
    assert.ok(['public', 'human', 'admin', 'workflow'].includes(op['x-switchboard-access'] as string), name);
    const security = op.security as unknown[];
    assert.equal(security.length === 0, op['x-switchboard-access'] === 'public', `${name}: security`);
    const responses = op.responses as Record<string, { $ref?: string }>;
    assert.equal(responses['400']?.$ref, '#/components/responses/InvalidArgument', name);
    assert.ok(
      Object.keys(responses).some((s) => s.startsWith('2')),
      `${name}: declares a success answer`,
    );
  }
  const error = doc.components.schemas.Error;
  assert.deepEqual(error.required, ['error']);
  const codes: string[] = error.properties.error.properties.code.enum;
  assert.ok(codes.includes('invalid_argument'));
});

test('inputs come from the use cases’ schemas: a todo push lists the fields createTodoInput takes', () => {
  const push = operations.get('POST /api/v1/endpoints/{ref}/todos');
  assert.ok(push);
  const body = JSON.stringify(push.requestBody);
  for (const field of ['queue', 'title', 'idempotency_key', 'not_before', 'todos'])
    assert.ok(body.includes(field), field);
  const list = operations.get('GET /api/v1/endpoints/{ref}/todos');
  const names = (list?.parameters as Array<{ name: string; in: string }>).map((p) => `${p.in}:${p.name}`);
  assert.deepEqual(names.sort(), [
    'path:ref',
    'query:cursor',
    'query:include_synthetic',
    'query:limit',
    'query:queue',
    'query:state',
  ]);
});

/**
 * The one answer not declared field by field: this document itself, whose shape is
 * OpenAPI 3.1's (the validator above holds it to that).
 */
const SELF_DESCRIBED = new Set(['GET /api/v1/openapi.json']);

/** Where a JSON Schema declares an object with unnamed fields, or says nothing at all ("" is the top). */
function undeclared(schema: Record<string, unknown>, at = ''): string[] {
  const branches = (schema.anyOf ?? schema.oneOf) as Array<Record<string, unknown>> | undefined;
  if (branches) return branches.flatMap((b, i) => undeclared(b, `${at}|${i}`));
  if (schema.type === undefined && schema.const === undefined && schema.enum === undefined) return [at || '(top)'];
  if (schema.type !== 'object') return [];
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!properties || Object.keys(properties).length === 0 || schema.additionalProperties !== false)
    return [at || '(top)'];
  return [];
}

test('every route declares its success answers field by field (no bare objects)', () => {
  const bare: string[] = [];
  for (const [name, op] of operations) {
    const responses = op.responses as Record<
      string,
      { content?: Record<string, { schema?: Record<string, unknown> }> }
    >;
    const successes = Object.entries(responses).filter(([status]) => status.startsWith('2'));
    assert.ok(successes.length > 0, `${name}: declares a success answer`);
    if (SELF_DESCRIBED.has(name)) continue;
    for (const [status, response] of successes) {
      const schema = response.content?.['application/json']?.schema;
      if (!schema) bare.push(`${name} ${status}: no schema`);
      else for (const where of undeclared(schema)) bare.push(`${name} ${status} at ${where}`);
    }
  }
  assert.deepEqual(bare, [], 'declare these answers in src/contract/ (docs/design/api-contract.md)');
});

test('the answers of the main groups are declared field by field', () => {
  for (const name of [
    'GET /api/v1/todos/{id}',
    'GET /api/v1/endpoints',
    'GET /api/v1/endpoints/{ref}/webhooks',
    'GET /api/v1/endpoints/{ref}/schedules',
    'GET /api/v1/admission',
    'GET /api/v1/endpoints/{ref}/events',
  ]) {
    const op = operations.get(name);
    assert.ok(op, name);
    const ok = (op.responses as Record<string, { content: Record<string, { schema: Record<string, unknown> }> }>)[
      '200'
    ];
    const schema = ok?.content['application/json']?.schema;
    assert.ok(schema?.properties, `${name}: a declared object`);
    assert.equal(schema.additionalProperties, false, `${name}: the answer's fields are all named`);
  }
});

test('docs/api.md shows a curl per tag of the document, marked with the tag', async () => {
  const text = await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const from = text.indexOf('```sh', text.indexOf('One curl per group'));
  const block = text.slice(from, text.indexOf('```\n', from + 5));
  const marked = new Set([...block.matchAll(/ # ([a-z-]+)/g)].map((m) => m[1]));
  const tags = (doc.tags as Array<{ name: string }>).map((t) => t.name);
  assert.deepEqual(
    tags.filter((t) => !marked.has(t)),
    [],
    'add a curl line ending `# <tag>` to docs/api.md',
  );
});
