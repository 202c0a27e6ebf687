import Big from 'big.js';
import type { UserTx } from '@agentyard/db';
import { BridgeErrors } from '../errors.ts';
import { requireOwnAgent } from './agent-ownership.ts';
import { checksumAddress } from './wallets.ts';

const USDC_DP = 6;
const ROUND_DOWN = 0;

export interface NewSplit {
  agentId: string;
  name: string;
  totalAmount: string;
  recipients: { address: string; share: number }[];
}

/**
 * Each recipient's amount in exact decimals: total × share / 100, rounded down to USDC's 6
 * decimals, with the rounding remainder going to the last recipient so the amounts add up to the total.
 */
export function splitAmounts(totalAmount: string, shares: number[]): string[] {
  const total = new Big(totalAmount);
  const exactShares = shares.map((share) => new Big(String(share)));
  if (!exactShares.reduce((sum, s) => sum.plus(s), new Big(0)).eq(100)) throw BridgeErrors.sharesNot100();
  const amounts = exactShares.map((share) => total.times(share).div(100).round(USDC_DP, ROUND_DOWN));
  const allocated = amounts.slice(0, -1).reduce((sum, a) => sum.plus(a), new Big(0));
  amounts[amounts.length - 1] = total.minus(allocated);
  return amounts.map((a) => a.toFixed(USDC_DP));
}

export async function createSplit(trx: UserTx, userId: string, split: NewSplit) {
  if (split.recipients.length === 0) throw BridgeErrors.emptyRecipients();
  if (new Big(split.totalAmount).lte(0)) throw BridgeErrors.totalNotPositive();
  const addresses = split.recipients.map((r) => checksumAddress(r.address));
  const amounts = splitAmounts(
    split.totalAmount,
    split.recipients.map((r) => r.share),
  );
  await requireOwnAgent(trx, split.agentId);
  const row = await trx
    .insertInto('underground_splits')
    .values({
      user_id: userId,
      agent_id: split.agentId,
      name: split.name,
      total_amount_usdc: split.totalAmount,
      status: 'completed',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('underground_split_recipients')
    .values(
      split.recipients.map((r, position) => ({
        split_id: row.id,
        position,
        user_id: userId,
        address: addresses[position]!,
        share_percent: String(r.share),
        amount_usdc: amounts[position]!,
      })),
    )
    .execute();
  return { success: true as const, splitId: row.id, status: 'completed' as const };
}
