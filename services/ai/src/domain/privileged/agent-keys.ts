import type { SystemDb } from '@agentyard/db/system';
import type { MinuteLimits } from '../limits/minute-limits.ts';

export interface AgentCaller {
  agentId: string;
  userId: string;
  email: string;
  emailVerified: boolean;
  aiProvider: string;
  /** The owner's limits on its calls per minute (null: none set). */
  minuteLimits: MinuteLimits | null;
}

/** The hosted agent whose AI key hashes to this (keys are stored only as their hash), with its owner. */
export async function agentByAiKeyHash(db: SystemDb, keyHash: string): Promise<AgentCaller | undefined> {
  const row = await db
    .selectFrom('agents')
    .innerJoin('users', 'users.id', 'agents.user_id')
    .leftJoin('agent_minute_limits', 'agent_minute_limits.agent_id', 'agents.id')
    .select([
      'agents.id as agentId',
      'agents.user_id as userId',
      'users.email as email',
      'users.email_verified_at',
      'agents.ai_provider as aiProvider',
      'agent_minute_limits.requests_per_minute',
      'agent_minute_limits.tokens_per_minute',
    ])
    .where('agents.ai_key_hash', '=', keyHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const { email_verified_at, requests_per_minute, tokens_per_minute, ...caller } = row;
  const limited = requests_per_minute != null || tokens_per_minute != null;
  return {
    ...caller,
    emailVerified: email_verified_at !== null,
    minuteLimits: limited
      ? { requestsPerMinute: requests_per_minute ?? null, tokensPerMinute: tokens_per_minute ?? null }
      : null,
  };
}
