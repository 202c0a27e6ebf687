import { fastifyRoute, schedulingRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import type { Queue } from '@agentyard/queue';
import { createTask, deleteTask, listTasks, updateTask } from '../domain/scheduled-tasks.ts';
import type { DeliveryPolicy } from '../domain/timers.ts';
import { SchedulerErrors } from '../errors.ts';
import { isMissing, violationMessages } from './validation-messages.ts';

const taskIdMessages = violationMessages((v) => (isMissing(v, 'taskId') ? SchedulerErrors.taskIdRequired() : undefined));

export default async function scheduledTaskRoutes(app: ServiceApp, { timers }: { timers: { queue: Queue; policy: DeliveryPolicy } }) {
  app.route({
    ...fastifyRoute(schedulingRoutes.listTasks),
    handler: async (request) => {
      const tasks = await request.asUser((trx) => listTasks(trx, request.query.agentId));
      return { tasks, count: tasks.length };
    },
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.createTask),
    errorHandler: violationMessages((v) => (isMissing(v) ? SchedulerErrors.missingTaskFields() : undefined)),
    handler: async (request, reply) => {
      const task = await request.asUser((trx) => createTask(trx, request.identity.userId!, timers, request.body));
      return reply.code(201).send(task);
    },
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.updateTask),
    errorHandler: taskIdMessages,
    handler: async (request) => request.asUser((trx) => updateTask(trx, timers, request.body)),
  });

  app.route({
    ...fastifyRoute(schedulingRoutes.deleteTask),
    errorHandler: taskIdMessages,
    handler: async (request) => {
      await request.asUser((trx) => deleteTask(trx, timers, request.body.taskId));
      return { success: true as const, taskId: request.body.taskId };
    },
  });
}
