import { Redis, type RedisOptions } from 'ioredis';
import { closeHandler } from 'ioredis/built/redis/event_handler.js';

/**
 * ioredis's client, except that one disconnected while it waits to reconnect (Redis away, or just
 * back) ends, as one disconnected at any other time does: ioredis clears its reconnect timer and
 * has no socket left to close, so it never reaches `end` (redis/ioredis#1247), and BullMQ's
 * `close()` of a worker or of queue events, which waits for `end`, waits forever. The end is
 * ioredis's own (its close handler, as it runs it for a client that never connected). Its copies
 * (`duplicate()`, BullMQ's blocking connections) are of this class too.
 */
export class ClosableRedis extends Redis {
  constructor(url: string, options: RedisOptions);
  constructor(options: RedisOptions);
  constructor(urlOrOptions: string | RedisOptions, options: RedisOptions = {}) {
    type Legacy = RedisOptions & { replyMapping?: 'legacy' };
    if (typeof urlOrOptions === 'string') super(urlOrOptions, options as Legacy);
    else super(urlOrOptions as Legacy);
  }

  override disconnect(reconnect = false): void {
    const waitingToReconnect = !reconnect && this.status === 'reconnecting';
    super.disconnect(reconnect);
    if (waitingToReconnect && this.status === 'reconnecting') closeHandler(this)();
  }

  override duplicate(override?: Partial<RedisOptions>): Redis {
    return new ClosableRedis({ ...this.options, ...override });
  }
}

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
  const redis = new ClosableRedis(url, options);
  redis.on('error', (err) =>
    errors.log?.[errors.level ?? 'error']?.({ err: { message: err.message } }, `${errors.purpose} connection error`),
  );
  return redis;
}
