import type { SystemDb } from '@agentyard/db/system';

export interface AgentCaller {
  agentId: string;
  userId: string;
  email: string;
  aiProvider: string;
}

/** The hosted agent whose AI key hashes to this (keys are stored only as their hash), with its owner. */
export async function agentByAiKeyHash(db: SystemDb, keyHash: string): Promise<AgentCaller | undefined> {
  const row = await db.selectFrom('agents').innerJoin('users', 'users.id', 'agents.user_id')
    .select(['agents.id as agentId', 'agents.user_id as userId', 'users.email as email', 'agents.ai_provider as aiProvider'])
    .where('agents.ai_key_hash', '=', keyHash).executeTakeFirst();
  return row;
}
