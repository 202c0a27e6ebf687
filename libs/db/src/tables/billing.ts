import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from './columns.ts';

/** A user's customer at the payment provider (Stripe `cus_…`, or the local provider's). */
export interface BillingCustomersTable {
  user_id: string;
  provider: 'stripe' | 'local';
  customer_id: string;
  created_at: Generated<Date>;
}

/** A development checkout (BILLING_PROVIDER=local): single-use, bound to its user, expiring. */
export interface LocalCheckoutsTable {
  /** hashToken of the id in the checkout's URL. */
  id_hash: string;
  user_id: string;
  kind: 'subscription' | 'credits';
  plan: string | null;
  /** numeric: read as a string. */
  amount_usd: ColumnType<string | null, string | number | null, string | number | null>;
  /** What the return page verifies (`cs_local_…`), like a Stripe Checkout Session id. */
  session_id: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  completed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}
