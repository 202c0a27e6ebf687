import type { UserTx } from '@agentyard/db';
import { requireOwnAgent } from './agent-ownership.ts';
import { checksumAddress } from './wallets.ts';

/** Registers (or replaces) the wallet whose signatures speak for an agent on the bus, and its webhook. */
export async function registerBusEndpoint(
  trx: UserTx,
  userId: string,
  agentId: string,
  endpoint: { walletAddress: string; webhookUrl: string },
) {
  await requireOwnAgent(trx, agentId);
  const walletAddress = checksumAddress(endpoint.walletAddress);
  await trx
    .insertInto('bus_endpoints')
    .values({ agent_id: agentId, user_id: userId, signer_address: walletAddress, webhook_url: endpoint.webhookUrl })
    .onConflict((oc) =>
      oc
        .column('agent_id')
        .doUpdateSet({ signer_address: walletAddress, webhook_url: endpoint.webhookUrl, updated_at: new Date() }),
    )
    .execute();
  return { agentId, walletAddress, webhookUrl: endpoint.webhookUrl };
}
