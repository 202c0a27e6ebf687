import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { errorBody, type ServiceApp } from '@agentyard/http';
import { createQueues, QUEUES } from '@agentyard/queue';
import { resolveWebCaller, type CallerContext } from '../plugins/caller.ts';
import type { EdgeConfig } from '../config.ts';
import { EdgeErrors } from '../errors.ts';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * bull-board for every queue at /admin/queues on the web surface, to admins only: the caller's
 * session (or user key) through the edge's own resolution and admin check; anyone else gets the
 * same 404 as a path that does not exist. Admins can inspect jobs and retry failed ones.
 */
export default async function queueDashboard(app: ServiceApp, options: { config: EdgeConfig; context: CallerContext }) {
  const queues = createQueues({
    redisUrl: options.config.REDIS_URL,
    prefix: options.config.QUEUE_PREFIX,
    log: app.log,
  });
  app.addHook('onClose', () => queues.close());
  const adapter = new FastifyAdapter();
  adapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: Object.values(QUEUES).map((name) => new BullMQAdapter(queues.get(name))),
    serverAdapter: adapter,
  });
  await app.register(async (admin) => {
    // Answered here: bull-board's routes have an error handler of their own, with another body shape.
    admin.addHook('onRequest', async (request, reply) => {
      if (!(await resolveWebCaller(request, options.context)).admin)
        return reply.code(404).send(errorBody(EdgeErrors.notFound()));
    });
    await admin.register(adapter.registerPlugin() as never, { prefix: QUEUE_DASHBOARD_PATH });
  });
}
