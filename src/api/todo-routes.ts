// /api/v1 routes for the todos on a human's endpoints: push one or many, list, show with
// attempts, retry now, cancel, answer a todo's question. A workflow token may push; everything else takes the
// human's own token.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { todoListOut, todoOneOut, todoPushedOut, todoShowOut, todosPushedOut } from '../contract/todos.js';
import { createTodoInput, listTodosInput } from '../domain/todo.js';
import { isBulkBody, pushTodos } from '../endpoints/todos-bulk.js';
import {
  answerHumanTodo,
  cancelTodo,
  listEndpointTodos,
  pushTodo,
  retryTodo,
  showTodo,
  type OperatorDeps,
} from '../endpoints/todos.js';
import { BULK_BODY_LIMIT } from '../http/app.js';
import type { Auth } from '../http/auth.js';
import { route } from '../http/contract.js';
import { createTodosInput } from '../todos/create-bulk.js';
import { answerInput } from '../todos/index.js';
import { idParams, refParams } from './contract-common.js';

/** Query strings arrive as text; numeric fields are turned into numbers for validation. */
function listQuery(query: unknown): Record<string, unknown> {
  const q = { ...(query as Record<string, string>) } as Record<string, unknown>;
  if (typeof q.limit === 'string' && /^\d+$/.test(q.limit)) q.limit = Number(q.limit);
  return q;
}

export function todoRoutes(app: FastifyInstance, deps: OperatorDeps, auth: Auth, now: () => Date): void {
  const todos = { tag: 'todos', access: 'human' } as const;
  // One todo, or `{todos: [...]}` (a bulk create, counted once by the rate limit).
  route(
    app,
    {
      ...todos,
      access: 'workflow',
      method: 'POST',
      url: '/api/v1/endpoints/:ref/todos',
      summary: 'Push one todo, or up to 1,000 as `{todos: [...]}` (all or nothing).',
      params: refParams,
      body: z.union([createTodoInput, createTodosInput]),
      answers: { 201: z.union([todoPushedOut, todosPushedOut]), 200: todoPushedOut },
      bodyLimit: BULK_BODY_LIMIT,
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'workflow');
      if (isBulkBody(request.body)) {
        return reply.status(201).send(await pushTodos(deps, human.id, request.params.ref, request.body, now()));
      }
      const result = await pushTodo(deps, human.id, request.params.ref, request.body, now());
      return reply.status(result.created ? 201 : 200).send(result);
    },
  );
  route(
    app,
    {
      ...todos,
      method: 'GET',
      url: '/api/v1/endpoints/:ref/todos',
      summary: 'List an endpoint’s todos, newest first, a page at a time.',
      params: refParams,
      query: listTodosInput,
      answers: { 200: todoListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return listEndpointTodos(deps, human.id, request.params.ref, listQuery(request.query));
    },
  );
  route(
    app,
    {
      ...todos,
      method: 'GET',
      url: '/api/v1/todos/:id',
      summary: 'Show a todo and its attempts.',
      params: idParams,
      answers: { 200: todoShowOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return showTodo(deps, human.id, request.params.id);
    },
  );
  route(
    app,
    {
      ...todos,
      method: 'POST',
      url: '/api/v1/todos/:id/retry',
      summary: 'Retry a failed or canceled todo now.',
      params: idParams,
      answers: { 200: todoOneOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return retryTodo(deps, human.id, request.params.id);
    },
  );
  route(
    app,
    {
      ...todos,
      method: 'POST',
      url: '/api/v1/todos/:id/cancel',
      summary: 'Cancel a todo that is not done.',
      params: idParams,
      answers: { 200: todoOneOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return cancelTodo(deps, human.id, request.params.id);
    },
  );
  route(
    app,
    {
      ...todos,
      method: 'POST',
      url: '/api/v1/todos/:id/answer',
      summary: 'Answer the question a todo waits on (text, or a choice by index); it goes back to its queue first.',
      params: idParams,
      body: answerInput,
      answers: { 200: todoOneOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return answerHumanTodo(deps, human, request.params.id, request.body);
    },
  );
}
