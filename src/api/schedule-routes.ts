// /api/v1/endpoints/{ref}/schedules (docs/api.md, "Schedules"): a human's recurring todos
// on their endpoints. {ref} is an endpoint's slug or id; another human's endpoint or
// schedule answers 404 not_found, the same as an unknown one. Bodies are checked field by
// field before anything is written; PATCH changes any field, `paused` included.

import type { FastifyInstance } from 'fastify';
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

type RefParams = { Params: { ref: string } };
type IdParams = { Params: { ref: string; id: string } };

export function scheduleRoutes(app: FastifyInstance, deps: ScheduleDeps, auth: Auth, now: () => Date): void {
  const base = '/api/v1/endpoints/:ref/schedules';
  app.get<RefParams>(base, async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return listSchedules(deps, human.id, request.params.ref);
  });
  app.post<RefParams>(base, async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return reply.status(201).send(await createSchedule(deps, human.id, request.params.ref, request.body, now()));
  });
  app.get<IdParams>(`${base}/:id`, async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return showSchedule(deps, human.id, request.params.ref, request.params.id);
  });
  app.get<IdParams>(`${base}/:id/audit`, async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return scheduleAudit(deps, human.id, request.params.ref, request.params.id);
  });
  app.patch<IdParams>(`${base}/:id`, async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return patchSchedule(deps, human.id, request.params.ref, request.params.id, request.body, now());
  });
  app.delete<IdParams>(`${base}/:id`, async (request, reply) => {
    const { human } = await auth.authenticate(request, reply, 'human');
    return deleteSchedule(deps, human.id, request.params.ref, request.params.id);
  });
}
