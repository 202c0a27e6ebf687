import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createQueues, type QueueSet } from '@agentyard/queue';

declare module 'fastify' {
  interface FastifyInstance {
    /** The producers of the platform's queues. */
    queues: QueueSet;
  }
}

export interface QueuesOptions {
  redisUrl: string;
  prefix: string;
  /** Producers someone else owns: used, never closed here. */
  queues?: QueueSet;
}

export default fp(
  async function queuesPlugin(app: FastifyInstance, options: QueuesOptions) {
    const queues = options.queues ?? createQueues({ redisUrl: options.redisUrl, prefix: options.prefix, log: app.log });
    app.decorate('queues', queues);
    if (!options.queues) app.addHook('onClose', () => queues.close());
  },
  { name: 'agentyard-queues', fastify: '5.x' },
);
