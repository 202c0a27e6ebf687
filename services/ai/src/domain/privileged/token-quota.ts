import type { SystemDb } from '@agentyard/db/system';
import type { AiConfig } from '../../config.ts';
import { AiErrors } from '../../errors.ts';
import { MONTHLY_TOKEN_QUOTA, type Access } from '../plan-access.ts';
import { monthlyTokens } from './usage-writer.ts';

/** Refuses a call over the plan's monthly token quota when quotas are enforced. */
export async function checkQuota(
  config: Pick<AiConfig, 'QUOTAS_ENFORCED'>,
  system: SystemDb,
  access: Access,
  userRef: string,
  admin: boolean,
): Promise<void> {
  const quota = MONTHLY_TOKEN_QUOTA[access.plan];
  if (!config.QUOTAS_ENFORCED || admin || !Number.isFinite(quota)) return;
  if ((await monthlyTokens(system, userRef)) >= quota) throw AiErrors.quotaExceeded();
}
