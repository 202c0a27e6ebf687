import { randomBytes } from 'node:crypto';
import type { Log } from '@agentyard/http';
import type { WorkspaceLedger } from '@agentyard/runtime';
import type { Redis } from 'ioredis';
import { Mutex, TimeoutError } from 'redis-semaphore';
import { AgentWorkspaceErrors } from '../../errors.ts';

export interface WorkspaceAdmissionOptions {
  redis: Redis;
  /** Key prefix shared by every process of one platform (QUEUE_PREFIX). */
  prefix: string;
  /** How long a write waits for the workspace's lock before it answers busy. */
  waitMs: number;
  log: Pick<Log, 'error'>;
}

// A lock lapses this long after its holder stops renewing it (a crashed process); renewed well before.
const LOCK_LEASE_MS = 30_000;
const LOCK_RENEW_EVERY_MS = 10_000;
const LOCK_RETRY_EVERY_MS = 20;
/** A reservation lapses this long after its write stops renewing it (a process that died mid-upload). */
const RESERVATION_LEASE_MS = 60_000;

/**
 * What makes an agent's workspace limits hold under concurrency, across every process of the
 * platform (Redis): a lock per agent and purpose, and the ledger of bytes that uploads in flight
 * hold (a sorted set of `<id>:<bytes>` scored by when each lapses, renewed while its write lasts).
 */
export function workspaceAdmission(options: WorkspaceAdmissionOptions) {
  const inTurn = async <T>(lock: string, agentId: string, work: () => Promise<T>): Promise<T> => {
    const mutex = new Mutex(options.redis, `${options.prefix}:${lock}:${agentId}`, {
      lockTimeout: LOCK_LEASE_MS,
      refreshInterval: LOCK_RENEW_EVERY_MS,
      acquireTimeout: options.waitMs,
      retryInterval: LOCK_RETRY_EVERY_MS,
      onLockLost: (error) =>
        options.log.error({ agentId, lock, err: { message: error.message } }, 'lost a workspace lock while holding it'),
    });
    try {
      await mutex.acquire();
    } catch (error) {
      if (error instanceof TimeoutError) throw AgentWorkspaceErrors.busy();
      options.log.error(
        { agentId, lock, err: { message: (error as Error).message } },
        'could not take a workspace lock',
      );
      throw AgentWorkspaceErrors.unavailable();
    }
    try {
      return await work();
    } finally {
      await mutex
        .release()
        .catch((error: Error) =>
          options.log.error({ agentId, lock, err: { message: error.message } }, 'could not release a workspace lock'),
        );
    }
  };

  return {
    /** Runs a skill change alone among the agent's skill changes: its limit check and its install are one step. */
    skillChange: <T>(agentId: string, work: () => Promise<T>) => inTurn('agent-skills', agentId, work),

    /** The agent's workspace ledger (WorkspaceLedger): measure and reserve, then move into place and release, each under its lock. */
    ledger(agentId: string): WorkspaceLedger {
      const key = `${options.prefix}:agent-workspace-reserved:${agentId}`;
      const held = new Map<string, { member: string; renewal: NodeJS.Timeout }>();
      const hold = (member: string) =>
        options.redis
          .multi()
          .zadd(key, Date.now() + RESERVATION_LEASE_MS, member)
          .pexpire(key, RESERVATION_LEASE_MS)
          .exec();
      const reservedNow = async () => {
        const [, members] =
          (await options.redis
            .multi()
            .zremrangebyscore(key, '-inf', String(Date.now()))
            .zrange(key, '0', '-1')
            .exec()) ?? [];
        return ((members?.[1] as string[] | undefined) ?? []).reduce(
          (sum, member) => sum + Number(member.split(':')[1] ?? 0),
          0,
        );
      };
      return {
        reserve: (admit) =>
          inTurn('agent-workspace', agentId, async () => {
            const granted = await admit(await reservedNow());
            const id = randomBytes(8).toString('hex');
            if (granted.bytes > 0) {
              const member = `${id}:${granted.bytes}`;
              await hold(member);
              // Renewed while the write lasts: a slow upload keeps its bytes, a dead one gives them back.
              const renewal = setInterval(() => hold(member).catch(() => undefined), RESERVATION_LEASE_MS / 3);
              renewal.unref();
              held.set(id, { member, renewal });
            }
            return { ...granted, id };
          }),
        async settle(id, commit) {
          const reservation = held.get(id);
          if (!commit && !reservation) return;
          await inTurn('agent-workspace', agentId, async () => {
            try {
              await commit?.();
            } finally {
              if (reservation) {
                clearInterval(reservation.renewal);
                held.delete(id);
                await options.redis.zrem(key, reservation.member);
              }
            }
          });
        },
      };
    },
  };
}

export type WorkspaceAdmission = ReturnType<typeof workspaceAdmission>;
