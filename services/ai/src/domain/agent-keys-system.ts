import type { SystemDb } from '@agentyard/db/system';

export interface AgentCaller {
  agentId: string;
  userId: string;
  email: string;
  emailVerified: boolean;
  aiProvider: string;
}

/** The hosted agent whose AI key hashes to this (keys are stored only as their hash), with its owner. */
export async function agentByAiKeyHash(db: SystemDb, keyHash: string): Promise<AgentCaller | undefined> {
  const row = await db
    .selectFrom('agents')
    .innerJoin('users', 'users.id', 'agents.user_id')
    .select(['agents.id as agentId', 'agents.user_id as userId', 'users.email as email', 'users.email_verified_at', 'agents.ai_provider as aiProvider'])
    .where('agents.ai_key_hash', '=', keyHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const { email_verified_at, ...caller } = row;
  return { ...caller, emailVerified: email_verified_at !== null };
}
