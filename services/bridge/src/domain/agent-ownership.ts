import type { UserTx } from '@agentyard/db';
import { BridgeErrors } from '../errors.ts';

/** Row-level security hides other users' agents, so "not found" and "not yours" are one answer: 403. */
export async function requireOwnAgent(trx: UserTx, agentId: string): Promise<void> {
  const agent = await trx.selectFrom('agents').select('id').where('id', '=', agentId).executeTakeFirst();
  if (!agent) throw BridgeErrors.agentNotOwned();
}
