import { spendExhaustedSetKey } from '@agentyard/proto-schemas';
import type { Redis } from 'ioredis';

/** Why a paused delivery did not happen, as the task records it. */
export const PAUSED_MESSAGE = "Paused: this month's AI allowance and credits are spent (resumes when credits arrive)";

export interface SpendPause {
  /** The users among these whose AI allowance and credits are spent: their agents get no prompt nor heartbeat. */
  pausedAmong(userIds: readonly string[]): Promise<Set<string>>;
}

/**
 * Reads the AI gateway's set of exhausted users, one command per batch. Unanswered, nobody is
 * paused: the gateway still refuses the spend itself.
 */
export function spendPause(redis: Redis, prefix: string): SpendPause {
  return {
    async pausedAmong(userIds) {
      const unique = [...new Set(userIds)];
      if (unique.length === 0) return new Set();
      try {
        const members = await redis.smismember(spendExhaustedSetKey(prefix), ...unique);
        return new Set(unique.filter((_, i) => members[i] === 1));
      } catch {
        return new Set();
      }
    },
  };
}
