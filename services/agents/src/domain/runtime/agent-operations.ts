import type { Redis } from 'ioredis';
import { Mutex, TimeoutError } from 'redis-semaphore';
import { AgentErrors } from '../../errors.ts';
import type { Log } from '@agentyard/http';

export interface AgentOperationOptions {
  redis: Redis;
  /** Key prefix shared by every process of one platform (QUEUE_PREFIX). */
  prefix: string;
  /** How long an operation waits for the one under way before it answers busy. */
  waitMs: number;
  log: Pick<Log, 'error'>;
}

// The lock lapses this long after its holder stops renewing it (a crashed process); renewed well before.
export const OPERATION_LEASE_MS = 30_000;
const RENEW_EVERY_MS = 10_000;
const RETRY_EVERY_MS = 50;

/**
 * One operation on an agent's container at a time, across every process of the platform: API
 * routes (start, stop, repair, update…) and workers (provisioning, configuration, reconciler).
 * A lease in Redis renewed while held, so a long operation (an image update waits for readiness)
 * holds no database connection. Waiting longer than `waitMs` gives `AgentErrors.busy()` (409); no
 * Redis gives `AgentErrors.operationsUnavailable()` (503) and the operation does not run.
 */
export function agentOperations(options: AgentOperationOptions) {
  return async function exclusive<T>(agentId: string, operation: () => Promise<T>): Promise<T> {
    const mutex = new Mutex(options.redis, `${options.prefix}:agent-operation:${agentId}`, {
      lockTimeout: OPERATION_LEASE_MS,
      refreshInterval: RENEW_EVERY_MS,
      acquireTimeout: options.waitMs,
      retryInterval: RETRY_EVERY_MS,
      onLockLost: (error) =>
        options.log.error(
          { agentId, err: { message: error.message } },
          'lost the agent operation lock while holding it',
        ),
    });
    try {
      await mutex.acquire();
    } catch (error) {
      if (error instanceof TimeoutError) throw AgentErrors.busy();
      options.log.error(
        { agentId, err: { message: (error as Error).message } },
        'could not take the agent operation lock',
      );
      throw AgentErrors.operationsUnavailable();
    }
    try {
      return await operation();
    } finally {
      await mutex
        .release()
        .catch((error: Error) =>
          options.log.error({ agentId, err: { message: error.message } }, 'could not release the agent operation lock'),
        );
    }
  };
}

export type ExclusiveOperation = ReturnType<typeof agentOperations>;
