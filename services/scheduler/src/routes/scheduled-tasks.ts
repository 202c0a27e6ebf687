import { fastifyRoute, schedulingRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import { listRuns, runNow } from '../domain/runs.ts';
import { createTask, deleteTask, listTasks, updateTask, type Scheduling } from '../domain/scheduled-tasks.ts';

export default async function scheduledTaskRoutes(app: ServiceApp, scheduling: Scheduling) {
  const { timers } = scheduling;
  const caller = (identity: { userId: string | null; admin: boolean }) => ({
    userId: identity.userId!,
    admin: identity.admin,
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.listTasks),
    handler: async (request) => {
      const { agentId, limit = 50, cursor } = request.query;
      const { tasks, nextCursor } = await request.asUser((trx) => listTasks(trx, { agentId, limit, cursor }));
      return { tasks, count: tasks.length, nextCursor };
    },
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.createTask),
    handler: async (request, reply) => {
      const task = await request.asUser((trx) => createTask(trx, caller(request.identity), scheduling, request.body));
      return reply.code(201).send(task);
    },
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.updateTask),
    handler: async (request) =>
      request.asUser((trx) => updateTask(trx, caller(request.identity), scheduling, request.body)),
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.deleteTask),
    handler: async (request) => {
      await request.asUser((trx) => deleteTask(trx, timers, request.body.taskId));
      return { success: true as const, taskId: request.body.taskId };
    },
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.listRuns),
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      return request.asUser((trx) => listRuns(trx, request.params.taskId, { limit, cursor }));
    },
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.runTask),
    handler: async (request, reply) =>
      reply.code(202).send(await runNow((work) => request.asUser(work), timers, request.params.taskId)),
  });
}
