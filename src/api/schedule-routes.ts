// /api/v1/endpoints/{ref}/schedules (docs/api.md, "Schedules"): a human's recurring todos
// on their endpoints. {ref} is an endpoint's slug or id; another human's endpoint or
// schedule answers 404 not_found, the same as an unknown one. Bodies are checked field by
// field before anything is written; PATCH changes any field, `paused` included.

import type { FastifyInstance } from 'fastify';
import {
  scheduleAuditListOut,
  scheduleDeletedOut,
  scheduleListOut,
  scheduleOneOut,
  scheduleShowOut,
} from '../contract/schedules.js';
import { route } from '../http/contract.js';
import { createScheduleInput, patchScheduleInput } from '../schedules/input.js';
import { refIdParams, refParams } from './contract-common.js';
import type { Auth } from '../http/auth.js';
import {
  createSchedule,
  deleteSchedule,
  listSchedules,
  patchSchedule,
  scheduleAudit,
  showSchedule,
  type ScheduleDeps,
} from '../schedules/manage.js';

export function scheduleRoutes(app: FastifyInstance, deps: ScheduleDeps, auth: Auth, now: () => Date): void {
  const base = '/api/v1/endpoints/:ref/schedules';
  const schedules = { tag: 'schedules', access: 'human' } as const;
  route(
    app,
    {
      ...schedules,
      method: 'GET',
      url: base,
      summary: 'List an endpoint’s schedules.',
      params: refParams,
      answers: { 200: scheduleListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return listSchedules(deps, human.id, request.params.ref);
    },
  );
  route(
    app,
    {
      ...schedules,
      method: 'POST',
      url: base,
      summary: 'Make a schedule: a todo pushed on a cron expression.',
      params: refParams,
      body: createScheduleInput,
      answers: { 201: scheduleOneOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return reply.status(201).send(await createSchedule(deps, human.id, request.params.ref, request.body, now()));
    },
  );
  route(
    app,
    {
      ...schedules,
      method: 'GET',
      url: `${base}/:id`,
      summary: 'Show a schedule and its audit.',
      params: refIdParams,
      answers: { 200: scheduleShowOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return showSchedule(deps, human.id, request.params.ref, request.params.id);
    },
  );
  route(
    app,
    {
      ...schedules,
      method: 'GET',
      url: `${base}/:id/audit`,
      summary: 'A schedule’s audit: who changed what.',
      params: refIdParams,
      answers: { 200: scheduleAuditListOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return scheduleAudit(deps, human.id, request.params.ref, request.params.id);
    },
  );
  route(
    app,
    {
      ...schedules,
      method: 'PATCH',
      url: `${base}/:id`,
      summary: 'Change any field of a schedule, `paused` included.',
      params: refIdParams,
      body: patchScheduleInput,
      answers: { 200: scheduleOneOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return patchSchedule(deps, human.id, request.params.ref, request.params.id, request.body, now());
    },
  );
  route(
    app,
    {
      ...schedules,
      method: 'DELETE',
      url: `${base}/:id`,
      summary: 'Delete a schedule.',
      params: refIdParams,
      answers: { 200: scheduleDeletedOut },
    },
    async (request, reply) => {
      const { human } = await auth.authenticate(request, reply, 'human');
      return deleteSchedule(deps, human.id, request.params.ref, request.params.id);
    },
  );
}
