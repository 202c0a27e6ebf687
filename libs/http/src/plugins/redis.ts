import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Redis, RedisOptions } from 'ioredis';
import { redisConnection } from '@agentyard/queue';

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
    const redis = redisConnection(options.url, options.options, {
      purpose: options.purpose,
      log: app.log,
      level: options.errorLevel,
    });
    app.decorate('redis', redis);
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  },
  { name: 'agentyard-redis', fastify: '5.x' },
);
