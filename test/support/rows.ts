// Rows as the store takes them, for store tests that insert directly: a pending order of a
// merchant's wallet with every column set (null where nothing is known), and its nonce.
import type { Transaction } from '../../src/domain/transaction.js';
import type { Nonce } from '../../src/ports/transactions.js';

let n = 0;

export function pendingOrder(
  owner: { user_id: string; wallet_id: string },
  over: Partial<Transaction> = {},
): Transaction {
  const now = Date.now();
  return {
    order_id: `T${process.pid}${now}${++n}`,
    user_id: owner.user_id,
    wallet_id: owner.wallet_id,
    merchant_reference: `ref-${process.pid}-${now}-${n}`,
    payment_method: 'alipay',
    host_type: 0,
    amount: 100,
    currency: 'NZD',
    amount_cny: null,
    currency_rate: null,
    product_name: 'P',
    return_url: 'https://m.example/r',
    callback_url: 'https://m.example/n',
    backPage_url: null,
    ip: '10.0.0.1',
    present_qr: null,
    status: 'pending',
    status_message: null,
    msgId: null,
    channel: 'sandbox',
    channel_ref: null,
    qr_code_url: null,
    channel_state: null,
    refunded_amount: 0,
    cancel_locked_until: null,
    status_seq: 0,
    created_at: now,
    updated_at: now,
    pay_time: null,
    ...over,
  };
}

export function nonceOf(t: Pick<Transaction, 'order_id'>, over: Partial<Nonce> = {}): Nonce {
  return {
    nonce: `n${process.pid}${Date.now()}${++n}`,
    order_id: t.order_id,
    expires_at: Date.now() + 60_000,
    used_at: null,
    created_at: 1,
    page_token_hash: null,
    ...over,
  };
}
