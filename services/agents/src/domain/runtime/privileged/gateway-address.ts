import type { SystemDb } from '@agentyard/db/system';
import type { RuntimeDriver } from '@agentyard/runtime';

/**
 * Records where the agent's gateway answers now, as the driver says after it last saw the agent: a
 * Kubernetes pod started again or moved to another node has another address; for the other drivers
 * the URL is the one recorded and nothing is written. The one place `gateway_url` follows the
 * runtime after provisioning (launch.ts records it with each new container). True when it changed.
 */
export async function followGatewayAddress(db: SystemDb, driver: RuntimeDriver, agentId: string): Promise<boolean> {
  const row = await db
    .selectFrom('agents')
    .select(['container_id', 'host_port', 'gateway_url'])
    .where('id', '=', agentId)
    .executeTakeFirst();
  if (!row?.container_id) return false;
  const url = driver.gatewayUrl(row.host_port ?? 0, agentId);
  if (url === row.gateway_url) return false;
  const moved = await db
    .updateTable('agents')
    .set({ gateway_url: url })
    .where('id', '=', agentId)
    .where('container_id', '=', row.container_id)
    .executeTakeFirst();
  return moved.numUpdatedRows > 0n;
}
