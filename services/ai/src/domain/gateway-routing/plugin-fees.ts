import type { Database, Kysely } from '@agentyard/db';
import type { GatewayPluginName } from '@agentyard/proto-schemas';
import type { Caller, ChatGateway } from '../chat-gateway.ts';
import { creditBalanceUsd, monthUsage } from '../spending/index.ts';
import type { Hold } from '../spending/privileged/spend-counters.ts';

/** Parses `agent:0.01,generate-text:0.002`: each plugin's fee in USD. */
export function parsePluginPrices(spec: string): Map<string, number> {
  return new Map(
    spec
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry) => {
        const [name, usd] = entry.split(':');
        return [name!.trim(), Number(usd)] as const;
      }),
  );
}

/** A fee reserved before its plugin runs: charged once the plugin answered, given back otherwise. */
export interface ReservedFee {
  plugin: GatewayPluginName;
  feeUsd: number;
  hold: Hold | null;
  charged: boolean;
}

export interface Payment {
  method: 'allowance' | 'credits' | 'none';
  chargedUsd: number;
  balanceUsd: number;
}

/** Less than this is rounding, not spend past the allowance. */
const EPSILON_USD = 1e-9;

/**
 * The gateway's per-plugin fees. A fee is reserved on the caller's budget before the plugin runs
 * (402 CREDITS_EXHAUSTED or BUDGET_EXCEEDED when allowance and credits cannot cover it), then
 * recorded as usage: within the month's allowance it is paid from it, beyond it the usage writer
 * takes it from the credits ledger. Admins, whose AI calls draw on no budget, pay no fee.
 */
export class PluginFees {
  private readonly gateway: ChatGateway;
  private readonly prices: Map<string, number>;
  private readonly flushUsage: () => Promise<void>;

  constructor(gateway: ChatGateway, prices: Map<string, number>, flushUsage: () => Promise<void>) {
    this.gateway = gateway;
    this.prices = prices;
    this.flushUsage = flushUsage;
  }

  priceOf(plugin: GatewayPluginName): number {
    return this.prices.get(plugin) ?? 0;
  }

  async reserve(caller: Caller, plugin: GatewayPluginName): Promise<ReservedFee> {
    const feeUsd = caller.budget ? this.priceOf(plugin) : 0;
    const hold = feeUsd > 0 ? await this.gateway.reserve(caller, feeUsd) : null;
    return { plugin, feeUsd, hold, charged: false };
  }

  /** The plugin failed: nothing is charged. */
  release(fee: ReservedFee): void {
    if (!fee.charged) this.gateway.release(fee.hold);
  }

  /**
   * Charges the fee, writes it (and the call's other usage) at once so the ledger holds it when the
   * caller reads the answer, and says how it was paid. `read` runs work in the caller's own transaction.
   */
  async charge(
    fee: ReservedFee,
    caller: Caller,
    read: <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T>,
  ): Promise<Payment> {
    fee.charged = true;
    if (!caller.budget || !caller.userId)
      return {
        method: 'none',
        chargedUsd: 0,
        balanceUsd: caller.userId ? await read((db) => creditBalanceUsd(db, caller.userId!)) : 0,
      };
    if (fee.feeUsd > 0) this.gateway.recordFee(caller, fee.plugin, fee.feeUsd, fee.hold);
    await this.flushUsage();
    const userId = caller.userId;
    const allowance = this.gateway.allowanceOf(caller.budget.plan);
    const { monthUsd, balanceUsd } = await read(async (db) => ({
      monthUsd: (await monthUsage(db, userId)).monthUsd,
      balanceUsd: await creditBalanceUsd(db, userId),
    }));
    // The fee is the caller's newest spend: when the month now passes the allowance, at least part of it came from credits.
    const method = fee.feeUsd > 0 && monthUsd > allowance + EPSILON_USD ? 'credits' : 'allowance';
    return { method, chargedUsd: fee.feeUsd, balanceUsd: Number(balanceUsd.toFixed(8)) };
  }
}
