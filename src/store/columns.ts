import type { OrderResult, Transaction } from '../domain/transaction.js';
import type { NewOutboxRow, NotificationAttempt } from '../ports/outbox.js';
import type { NewChannelPayment, Nonce } from '../ports/transactions.js';

// The column lists of the request paths' statements, in parameter order: an insert names exactly
// these columns (never the keys of a caller's object, never `select *`), so a column left out
// gets its DEFAULT. The checks below fail to compile when a list misses a field of its row type;
// test/store/prepared-statements.test.ts compares the lists with the tables.

export const TRANSACTION_COLUMNS = [
  'order_id',
  'user_id',
  'wallet_id',
  'merchant_reference',
  'payment_method',
  'host_type',
  'amount',
  'currency',
  'amount_cny',
  'currency_rate',
  'product_name',
  'return_url',
  'callback_url',
  'backPage_url',
  'ip',
  'present_qr',
  'status',
  'status_message',
  'msgId',
  'channel',
  'channel_ref',
  'qr_code_url',
  'channel_state',
  'refunded_amount',
  'cancel_locked_until',
  'status_seq',
  'created_at',
  'updated_at',
  'pay_time',
] as const satisfies readonly (keyof Transaction)[];

export const NONCE_COLUMNS = [
  'nonce',
  'order_id',
  'expires_at',
  'used_at',
  'created_at',
  'page_token_hash',
] as const satisfies readonly (keyof Nonce)[];

export const OUTBOX_COLUMNS = [
  'event_id',
  'order_id',
  'seq',
  'callback_url',
  'callback_host',
  'payload',
  'delivery_status',
  'attempts',
  'next_attempt_at',
  'claimed_by',
  'claimed_until',
  'created_at',
  'delivered_at',
  'attempts_pruned',
  'attempts_pruned_until',
] as const satisfies readonly (keyof NewOutboxRow)[];

/** A provider payment as first recorded (its state, payload and claim keep their DEFAULTs). */
export const NEW_PAYMENT_COLUMNS = [
  'out_trade_no',
  'order_id',
  'provider',
  'flow',
  'attempt',
  'charged_amount',
  'charged_currency',
  'description',
  'client_ip',
  'payer',
  'created_at',
  'updated_at',
  'next_check_at',
] as const satisfies readonly (keyof NewChannelPayment)[];

/** The columns a query answers with (OrderResult). */
export const RESULT_COLUMNS = [
  'order_id',
  'user_id',
  'wallet_id',
  'merchant_reference',
  'payment_method',
  'status',
  'currency',
  'amount',
  'amount_cny',
  'currency_rate',
  'created_at',
  'pay_time',
  'status_message',
  'msgId',
] as const satisfies readonly (keyof OrderResult)[];

/**
 * Refuses a row that leaves a listed column undefined, as binding a prepared statement does
 * (prepared.ts): for the rows sent as JSON, where an undefined value would silently become NULL.
 */
export function requireColumns(row: object, columns: readonly string[], what: string): void {
  const values = row as Record<string, unknown>;
  for (const c of columns)
    if (values[c] === undefined) throw new Error(`${what}: column ${c} is undefined; pass null for NULL`);
}

/** A notification attempt as recorded (its attempt_id is the table's). */
export const ATTEMPT_COLUMNS = [
  'event_id',
  'attempted_at',
  'http_status',
  'response_excerpt',
  'latency_ms',
  'error',
] as const satisfies readonly (keyof NotificationAttempt)[];

/** `true` only when the list names every key of T (a compile error otherwise). */
type Covers<T, L extends readonly unknown[]> = [Exclude<keyof T, L[number]>] extends [never] ? true : never;
const columnListsAreComplete: [
  Covers<Transaction, typeof TRANSACTION_COLUMNS>,
  Covers<Nonce, typeof NONCE_COLUMNS>,
  Covers<NewOutboxRow, typeof OUTBOX_COLUMNS>,
  Covers<OrderResult, typeof RESULT_COLUMNS>,
  Covers<NewChannelPayment, typeof NEW_PAYMENT_COLUMNS>,
  Covers<Omit<NotificationAttempt, 'attempt_id'>, typeof ATTEMPT_COLUMNS>,
] = [true, true, true, true, true, true];
void columnListsAreComplete;
