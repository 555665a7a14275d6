import { sql, type Kysely, type QueryCreator, type UpdateObject } from 'kysely';
import type { FinalStatus } from '../../domain/transaction.js';
import type { NewChannelPayment, Nonce } from '../../ports/transactions.js';
import { NEW_PAYMENT_COLUMNS, NONCE_COLUMNS, RESULT_COLUMNS, TRANSACTION_COLUMNS } from '../columns.js';
import { prepared, row } from '../prepared.js';
import type { Database } from '../schema.js';

// The statements of the request paths that both engines run, compiled once per store (prepared.ts).

/** A settle's arguments: the values settledTransaction computed, guarded on the row as read. */
export interface SettleArgs {
  order_id: string;
  status: FinalStatus;
  status_message: string | null;
  msgId: string | null;
  status_seq: number;
  pay_time: number;
  updated_at: number;
  /** The status_seq the caller read: the update happens only if the order is still at it (and pending). */
  read_seq: number;
}

export interface NonceClaim {
  nonce: string;
  now: number;
  host_type: 0 | 1;
  page_token_hash: string | null;
}

export function transactionStatements(db: Kysely<Database>) {
  return {
    byId: prepared((p: { order_id: string }) =>
      db.selectFrom('transactions').selectAll().where('order_id', '=', p.order_id),
    ),
    byReference: prepared((p: { user_id: string; merchant_reference: string }) =>
      db
        .selectFrom('transactions')
        .selectAll()
        .where('user_id', '=', p.user_id)
        .where('merchant_reference', '=', p.merchant_reference),
    ),
    resultByReference: prepared((p: { user_id: string; merchant_reference: string }) =>
      db
        .selectFrom('transactions')
        .select(RESULT_COLUMNS)
        .where('user_id', '=', p.user_id)
        .where('merchant_reference', '=', p.merchant_reference),
    ),
    insertNonce: prepared((p: Nonce) => db.insertInto('nonces').values(row(p, NONCE_COLUMNS))),
    insertPayment: prepared((p: NewChannelPayment) =>
      db.insertInto('channel_payments').values(row(p, NEW_PAYMENT_COLUMNS)),
    ),
    paymentByOutTradeNo: prepared((p: { out_trade_no: string }) =>
      db.selectFrom('channel_payments').selectAll().where('out_trade_no', '=', p.out_trade_no),
    ),
    claimNonce: prepared((p: NonceClaim) => claimNonce(db, p, false)),
    claimNonceForPage: prepared((p: NonceClaim) => claimNonce(db, p, true)),
    nonceRefusal: prepared((p: { nonce: string; host_type: 0 | 1 }) =>
      db
        .selectFrom('nonces')
        .innerJoin('transactions', 'transactions.order_id', 'nonces.order_id')
        .select(['nonces.used_at', 'nonces.expires_at'])
        .where('nonces.nonce', '=', p.nonce)
        .where('transactions.host_type', '=', p.host_type),
    ),
    checkoutVisit: prepared((p: { nonce: string; page_token_hash: string }) =>
      db
        .selectFrom('nonces')
        .select(['order_id', 'used_at'])
        .where('nonce', '=', p.nonce)
        .where('page_token_hash', '=', p.page_token_hash),
    ),
    settle: prepared((p: SettleArgs) => settleUpdate(db, p).returningAll()),
    /** A provider's answer to an open (its QR text, page address or JSAPI parameters), unless the payment was closed meanwhile. */
    setPaymentPayload: prepared((p: { out_trade_no: string; payload: string; updated_at: number }) =>
      db
        .updateTable('channel_payments')
        .set({ payload: p.payload, updated_at: p.updated_at })
        .where('out_trade_no', '=', p.out_trade_no)
        .where('state', '!=', sql.lit('closed')),
    ),
    /** What a provider said of a payment (paid, with its id, or closed); only an open payment changes. */
    markPayment: prepared((p: { out_trade_no: string; state: 'paid' | 'closed'; updated_at: number }) =>
      markPaymentUpdate(db, p.out_trade_no, { state: p.state, updated_at: p.updated_at }),
    ),
    /** The same, with the provider's id of the payment. */
    markPaymentWithRef: prepared(
      (p: { out_trade_no: string; state: 'paid' | 'closed'; provider_ref: string; updated_at: number }) =>
        markPaymentUpdate(db, p.out_trade_no, {
          state: p.state,
          provider_ref: p.provider_ref,
          updated_at: p.updated_at,
        }),
    ),
    setOrderQr: prepared((p: { order_id: string; qr_code_url: string; updated_at: number }) =>
      db
        .updateTable('transactions')
        .set({ qr_code_url: p.qr_code_url, updated_at: p.updated_at })
        .where('order_id', '=', p.order_id),
    ),
  };
}

export type TransactionStatements = ReturnType<typeof transactionStatements>;

/** markPayment's statement and arguments: the provider's id is written only when it gave one. */
export function markPaymentStatement(
  q: TransactionStatements,
  out_trade_no: string,
  state: 'paid' | 'closed',
  provider_ref: string | null,
  updated_at: number,
) {
  return provider_ref === null
    ? q.markPayment.bind({ out_trade_no, state, updated_at })
    : q.markPaymentWithRef.bind({ out_trade_no, state, provider_ref, updated_at });
}

/** A payment's state as a provider reported it (with `set`); only an open payment changes. */
export function markPaymentUpdate(
  db: QueryCreator<Database>,
  out_trade_no: string,
  set: UpdateObject<Database, 'channel_payments'>,
) {
  return db
    .updateTable('channel_payments')
    .set(set)
    .where('out_trade_no', '=', out_trade_no)
    .where('state', '=', sql.lit('open'));
}

/** The settle: exactly settledTransaction's values, only if the order is pending and at the status_seq read. */
export function settleUpdate(db: QueryCreator<Database>, p: SettleArgs) {
  return db
    .updateTable('transactions')
    .set({
      status: p.status,
      status_message: p.status_message,
      msgId: p.msgId,
      status_seq: p.status_seq,
      pay_time: p.pay_time,
      updated_at: p.updated_at,
    })
    .where('order_id', '=', p.order_id)
    .where('status', '=', sql.lit('pending'))
    .where('status_seq', '=', p.read_seq);
}

/** Marks an unused, unexpired nonce of an order of this host_type used; returns its order_id. */
export function claimNonce(db: QueryCreator<Database>, p: NonceClaim, withPageToken: boolean) {
  return db
    .updateTable('nonces')
    .set(withPageToken ? { used_at: p.now, page_token_hash: p.page_token_hash } : { used_at: p.now })
    .where('nonce', '=', p.nonce)
    .where('used_at', 'is', null)
    .where('expires_at', '>', p.now)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('transactions')
          .select('order_id')
          .whereRef('transactions.order_id', '=', 'nonces.order_id')
          .where('host_type', '=', p.host_type),
      ),
    )
    .returning('order_id');
}

/** The order insert that does nothing when its (user_id, merchant_reference) exists. */
export function insertTransaction(db: QueryCreator<Database>, p: Database['transactions']) {
  return db
    .insertInto('transactions')
    .values(row(p, TRANSACTION_COLUMNS))
    .onConflict((oc) => oc.columns(['user_id', 'merchant_reference']).doNothing());
}
