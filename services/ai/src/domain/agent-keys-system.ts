import { hashToken } from '@agentyard/crypto';
import type { SystemDb } from '@agentyard/db/system';

export interface AgentCaller {
  agentId: string;
  userId: string;
  email: string;
  userPlan: string;
  aiProvider: string;
}

/** The hosted agent holding this AI key (stored only as its hash), with its owner's plan. */
export async function agentByAiKey(db: SystemDb, key: string): Promise<AgentCaller | undefined> {
  const row = await db.selectFrom('agents').innerJoin('users', 'users.id', 'agents.user_id')
    .select(['agents.id as agentId', 'agents.user_id as userId', 'users.email as email', 'users.plan as userPlan', 'agents.ai_provider as aiProvider'])
    .where('agents.ai_key_hash', '=', hashToken(key)).executeTakeFirst();
  return row;
}
