import type { ColumnType, Generated } from 'kysely';

// Column names follow the spec's field names. Amounts are integer minor units, rates integer
// millionths, times integer epoch milliseconds (UTC); formatting happens at the wire.

export interface OrganisationsTable {
  organisation_id: Generated<number>;
  organisation_name: string;
  created_at: number;
}

export interface UsersTable {
  user_id: string;
  organisation_id: number;
  user_name: string;
  /** 'active' or 'disabled' */
  user_status: string;
  created_at: number;
}

export interface WalletsTable {
  wallet_id: string;
  user_id: string;
  wallet_name: string;
  currency: string;
  api_key: string;
  /** Comma-separated payment methods this wallet accepts. */
  payment_methods: string;
  /** 1: create requests may also be signed with the original service's legacy concatenation (signing.ts). */
  legacy_signatures: ColumnType<number, number | undefined, number>;
  created_at: number;
}

export interface RatesTable {
  currency_from: string;
  currency_to: string;
  rate_micros: number;
  updated_at: number;
}

export interface TransactionsTable {
  order_id: string;
  user_id: string;
  wallet_id: string;
  merchant_reference: string;
  payment_method: string;
  /** 1 for merchant-hosted QR, 0 for hosted checkout. */
  host_type: number;
  amount: number;
  currency: string;
  amount_cny: number | null;
  currency_rate: number | null;
  product_name: string;
  return_url: string;
  callback_url: string;
  backPage_url: string | null;
  ip: string;
  present_qr: string | null;
  status: string;
  /** PayID extras, sent in notifications: the rejection reason and the Pay ID. */
  status_message: string | null;
  msgId: string | null;
  channel: string;
  channel_ref: string | null;
  qr_code_url: string | null;
  /** Channel-private state, e.g. the sandbox remembers that the customer opened the payment app. */
  channel_state: string | null;
  refunded_amount: number;
  cancel_locked_until: number | null;
  /** Bumped on every status change; numbers the notifications of an order. */
  status_seq: number;
  created_at: number;
  updated_at: number;
  pay_time: number | null;
}

export interface NoncesTable {
  nonce: string;
  order_id: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
  /** sha256 hex of the hosted page's visit token, set when the nonce is used by the checkout page. */
  page_token_hash: string | null;
}

export interface RefundsTable {
  refund_id: string;
  order_id: string;
  refund_amount: number;
  reference: string;
  /** 'pending' while the channel is asked, then 'succeeded' or 'failed'. */
  refund_status: 'pending' | 'succeeded' | 'failed';
  /** order_id|amount|reference while the refund stands; null once failed, so a retry may proceed. */
  dedupe_key: string | null;
  created_at: number;
  updated_at: number;
}

export interface OutboxTable {
  event_id: string;
  order_id: string;
  seq: number;
  callback_url: string;
  /** `host[:port]` of callback_url: the unit of per-merchant delivery concurrency. */
  callback_host: string;
  /** JSON object of the notification fields without signature, in wire order; signed at each attempt. */
  payload: string;
  /** 'pending' until acknowledged with `sent`, then 'delivered'. */
  delivery_status: string;
  attempts: number;
  next_attempt_at: number;
  claimed_by: string | null;
  claimed_until: number | null;
  created_at: number;
  delivered_at: number | null;
}

export interface NotificationAttemptsTable {
  attempt_id: Generated<number>;
  event_id: string;
  attempted_at: number;
  http_status: number | null;
  response_excerpt: string | null;
  latency_ms: number;
  error: string | null;
}

export interface SequencesTable {
  name: string;
  next_value: number;
}

export interface Database {
  organisations: OrganisationsTable;
  users: UsersTable;
  wallets: WalletsTable;
  rates: RatesTable;
  transactions: TransactionsTable;
  nonces: NoncesTable;
  refunds: RefundsTable;
  outbox: OutboxTable;
  notification_attempts: NotificationAttemptsTable;
  sequences: SequencesTable;
}
