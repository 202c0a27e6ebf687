import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

/** numeric columns: strings both ways, so decimals stay exact. */
type Decimal = ColumnType<string, string, string>;

export type BridgeChannel = 'general' | 'tasks' | 'alerts';
export type BridgePriority = 'normal' | 'urgent' | 'fyi';

export interface BridgeMessagesTable {
  id: ColumnType<string, never, never>;
  sender: string;
  channel: BridgeChannel;
  priority: BridgePriority;
  content: string;
  created_at: Generated<Date>;
}

/** Every message of `channel` whose (created_at, id) lies in [lo, hi] is read by `reader`. */
export interface BridgeReadRangesTable {
  id: ColumnType<string, never, never>;
  channel: BridgeChannel;
  reader: string;
  lo_at: Timestamp;
  lo_id: ColumnType<string, string | number, string | number>;
  hi_at: Timestamp;
  hi_id: ColumnType<string, string | number, string | number>;
}

export interface UndergroundWalletsTable {
  address: string;
  user_id: string;
  agent_id: string;
  private_key_sealed: string;
  created_at: Generated<Date>;
}

export interface UndergroundEventsTable {
  id: ColumnType<string, never, never>;
  user_id: string;
  agent_id: string;
  name: string;
  description: string;
  venue: string;
  event_date: Timestamp;
  ticket_price_usdc: Decimal;
  total_tickets: number;
  created_at: Generated<Date>;
}

export interface UndergroundSplitsTable {
  id: Generated<string>;
  user_id: string;
  agent_id: string;
  name: string;
  total_amount_usdc: Decimal;
  status: 'completed';
  created_at: Generated<Date>;
}

export interface UndergroundSplitRecipientsTable {
  split_id: string;
  position: number;
  user_id: string;
  address: string;
  share_percent: Decimal;
  amount_usdc: Decimal;
}

export interface BusEndpointsTable {
  agent_id: string;
  user_id: string;
  signer_address: string;
  webhook_url: string;
  updated_at: Timestamp;
}

export interface BusMessagesTable {
  message_id: string;
  user_id: string;
  from_agent_id: string;
  to_agent_id: string;
  action: string;
  payload: Json<object | null, string>;
  signed_at: Timestamp;
  signature: string;
  routing: JSONColumnType<object | null, string | null, string | null> | null;
  delivered_at: Timestamp | null;
  delivery_error: string | null;
  delivery_attempts: Generated<number>;
  created_at: Generated<Date>;
}

export type WebhookSource = 'livestream' | 'hosting-status';

export interface WebhookEventsTable {
  source: WebhookSource;
  event_id: string;
  event_type: string;
  payload: Json<object | null, string>;
  received_at: Generated<Date>;
}
