import type { ColumnType, Generated } from 'kysely';
import type { Numeric, Timestamp } from './columns.ts';

/** One AI call: who, which agent and model, tokens, cost. `user_ref` is `demo`, a backend caller's `x-user-id`, or the user's id. */
export interface UsageEventsTable {
  id: string;
  user_id: string | null;
  user_ref: string;
  agent_id: string | null;
  model: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Prompt-cache reads and writes the provider reported, each part of input_tokens. */
  cache_read_tokens: ColumnType<number, number | undefined, number>;
  cache_write_tokens: ColumnType<number, number | undefined, number>;
  /** null when no price is known for the model (logged loudly, never counted as 0 silently). */
  cost_usd: Numeric | null;
  turn_count: number;
  /** The name of each tool the model called in its answer, in order. */
  tool_names: ColumnType<string[], string[] | undefined, string[]>;
  /** How the call was served: `{attempts: [{model, provider, status, outcome, ms}], ownKey?: true}`, each provider attempt (retries, fallbacks) and whether on the user's own key; null before it was kept. */
  detail: ColumnType<
    { attempts: Record<string, unknown>[]; ownKey?: true } | null,
    string | null | undefined,
    string | null
  >;
  /** `failed`: every provider attempt failed (no tokens, no cost, the attempts in `detail`). */
  outcome: ColumnType<'served' | 'failed', 'served' | 'failed' | undefined, 'served' | 'failed'>;
  /** The channel (`telegram`) whose inbound message started the agent's turn this call served; null: any other call. */
  channel: ColumnType<string | null, string | null | undefined, string | null>;
  occurred_at: Timestamp;
  day: ColumnType<string, string, string>;
}

/** Usage summed per (day, user, agent, model); `agent_id` is '' for calls made without an agent. */
export interface UsageDailyTable {
  day: ColumnType<string, string, string>;
  user_ref: string;
  user_id: string | null;
  agent_id: string;
  model: string;
  provider: string;
  /** Every call, the failed ones included. */
  calls: number;
  unpriced_calls: number;
  /** Calls none of whose provider attempts served them (part of `calls`). */
  failed_calls: ColumnType<number, number | undefined, number>;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: Numeric;
  turns: number;
  cache_read_tokens: ColumnType<number, number | undefined, number>;
  cache_write_tokens: ColumnType<number, number | undefined, number>;
}

/** Tool calls summed per (day, user, agent, tool): `calls` the calls, `answers` the answers that called it; `agent_id` '' without an agent. */
export interface UsageToolsDailyTable {
  day: ColumnType<string, string, string>;
  user_ref: string;
  user_id: string | null;
  agent_id: string;
  tool: string;
  calls: number;
  answers: number;
}

/** Stripe events already applied, by event id (webhook idempotency and ordering). */
export interface StripeEventsTable {
  id: string;
  type: string;
  object_id: string | null;
  created: Timestamp;
  processed_at: Generated<Date>;
}
