import type { ColumnType, Generated } from 'kysely';
import type { Numeric, Timestamp } from './columns.ts';

export type CreditKind = 'purchase' | 'usage' | 'refund' | 'grant';

/** One entry of a user's credits ledger (append-only; the balance is the sum of `amount_usd`). */
export interface CreditEntriesTable {
  id: Generated<string>;
  user_id: string;
  kind: CreditKind;
  /** Positive adds credits (purchase, grant), negative takes them (usage, refund). */
  amount_usd: Numeric;
  note: Generated<string>;
  /** What caused the entry (a payment, a refund, a usage batch): unique, so a cause applies once. */
  source: string;
  /** Usage entries only: the first day of the month whose spend beyond the allowance they settle. */
  usage_month: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

/** A user's own monthly limit on AI spend, below allowance plus credits. */
export interface SpendingLimitsTable {
  user_id: string;
  monthly_usd: Numeric | null;
  updated_at: Timestamp;
}

/** A user's monthly limit on one of their agents' AI spend. */
export interface AgentSpendingLimitsTable {
  agent_id: string;
  user_id: string;
  monthly_usd: Numeric;
  updated_at: Timestamp;
}

/** A caller's own limits on its AI calls per minute, set by its owner (null: none beyond the plan's caps). */
interface MinuteLimitsColumns {
  user_id: string;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  updated_at: Timestamp;
}

/** An agent's own limits on its AI calls per minute. */
export interface AgentMinuteLimitsTable extends MinuteLimitsColumns {
  agent_id: string;
}

/** A user API key's own AI requests and tokens per minute. */
export interface ApiKeyMinuteLimitsTable extends MinuteLimitsColumns {
  key_id: string;
}

/** A user's own key for a provider (BYOK), sealed with the platform keyring; the hint is its last four characters. */
export interface ProviderKeysTable {
  user_id: string;
  provider: string;
  key_sealed: string;
  key_hint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}
