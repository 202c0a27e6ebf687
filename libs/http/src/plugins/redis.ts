import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Redis, type RedisOptions } from 'ioredis';

declare module 'fastify' {
  interface FastifyInstance {
    /** A Redis connection of the service's own (counters, throttles), closed with the app. */
    redis: Redis;
  }
}

export interface RedisPluginOptions {
  url: string;
  options: RedisOptions;
  /** What the connection is for, in its error log lines. */
  purpose: string;
  /** Connection errors are warnings where the service carries on without Redis. */
  errorLevel?: 'warn' | 'error';
}

export default fp(
  async function redisPlugin(app: FastifyInstance, options: RedisPluginOptions) {
    const redis = new Redis(options.url, options.options);
    redis.on('error', (err) => app.log[options.errorLevel ?? 'error']({ err: { message: err.message } }, `${options.purpose} connection error`));
    app.decorate('redis', redis);
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  },
  { name: 'agentyard-redis', fastify: '5.x' },
);
