import { fastifyRoute, workspaceRoutes } from '@agentyard/proto-schemas';
import type { ServiceApp } from '@agentyard/http';
import {
  createWorkflow,
  deleteWorkflow,
  getWorkflow,
  listWorkflows,
  updateWorkflow,
} from '../../domain/settings/workflows.ts';

export default async function workflowRoutes(app: ServiceApp, { workflowsPerUser }: { workflowsPerUser: number }) {
  app.route({
    ...fastifyRoute(workspaceRoutes.listWorkflows),
    handler: async (request, reply) => {
      const { userId, auth } = request.identity;
      // Without a session the list still answers an (empty) list, with 401.
      if (!userId || (auth !== 'session' && auth !== 'user-key'))
        return reply.code(401).send({ error: 'Unauthorized', workflows: [] });
      const { limit = 50, cursor } = request.query;
      return request.asUser((trx) => listWorkflows(trx, { limit, cursor }));
    },
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.createWorkflow),
    handler: async (request, reply) => {
      const workflow = await request.asUser((trx) =>
        createWorkflow(trx, request.identity.userId!, workflowsPerUser, request.body),
      );
      return reply.code(201).send({ workflow });
    },
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.getWorkflow),
    handler: async (request) => ({
      workflow: await request.asUser((trx) => getWorkflow(trx, request.params.workflowId)),
    }),
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.updateWorkflow),
    handler: async (request) => ({
      workflow: await request.asUser((trx) =>
        updateWorkflow(trx, request.identity.userId!, request.params.workflowId, request.body),
      ),
    }),
  });

  app.route({
    ...fastifyRoute(workspaceRoutes.deleteWorkflow),
    handler: async (request) => {
      await request.asUser((trx) => deleteWorkflow(trx, request.params.workflowId));
      return { deleted: true as const };
    },
  });
}
