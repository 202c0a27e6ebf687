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
  /** null when no price is known for the model (logged loudly, never counted as 0 silently). */
  cost_usd: Numeric | null;
  turn_count: number;
  /** The name of each tool the model called in its answer, in order. */
  tool_names: ColumnType<string[], string[] | undefined, string[]>;
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
  calls: number;
  unpriced_calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: Numeric;
  turns: number;
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
