import { Redis, type RedisOptions } from 'ioredis';

/** Where a connection's errors are written: the process's log (pino, Fastify's). */
export interface RedisErrorLog {
  purpose: string;
  log?: { [level in 'warn' | 'error']?: (obj: object, msg: string) => void };
  /** `warn` where the process carries on without Redis. */
  level?: 'warn' | 'error';
}

/**
 * A Redis connection whose errors (Redis gone, each refused reconnect) are log lines naming what it
 * is for: ioredis writes a connection without an error listener's errors to stderr as "[ioredis]
 * Unhandled error event", outside the log and its redaction.
 */
export function redisConnection(url: string, options: RedisOptions, errors: RedisErrorLog): Redis {
  const redis = new Redis(url, options);
  redis.on('error', (err) => errors.log?.[errors.level ?? 'error']?.({ err: { message: err.message } }, `${errors.purpose} connection error`));
  return redis;
}
