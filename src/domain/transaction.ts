// A transaction (an order) and its state machine. A transaction is created pending and reaches
// exactly one final state; refunds never change a paid order's status (they are tracked as a
// refunded total). Every decision on a status goes through the functions here.

export const PAYMENT_METHODS = [
  'wechat',
  'alipay',
  'moneymore',
  'polipay',
  'payid',
  'upi_upop',
  'coin_payments',
] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/**
 * How a wallet's detail (GET /v2/detail/{wallet_id}) spells each method: capitalised as the
 * original service did (Alipay, Wechat, MoneyMore). Its shop plugins lower-case the name and send
 * that back as the create's payment_method, so each name lower-cases to the method exactly.
 */
export const DETAIL_METHOD_NAMES: Readonly<Record<PaymentMethod, string>> = {
  wechat: 'Wechat',
  alipay: 'Alipay',
  moneymore: 'MoneyMore',
  polipay: 'Polipay',
  payid: 'PayID',
  upi_upop: 'UPI_UPOP',
  coin_payments: 'Coin_Payments',
};

/** Merchant-hosted QR (host_type 1) offers only the two wallet apps. */
export const MERCHANT_HOSTED_METHODS: readonly PaymentMethod[] = ['alipay', 'wechat'];

export function isPaymentMethod(v: string): v is PaymentMethod {
  return (PAYMENT_METHODS as readonly string[]).includes(v);
}

/**
 * Earlier names of methods that integrations still send: the original's WooCommerce plugin sends
 * PayID as `azupay`, the method's name before its docs renamed it in 2024 (shared/README.md). The
 * order is the method's, under its one name, everywhere after the create.
 */
const METHOD_ALIASES: Readonly<Record<string, PaymentMethod>> = { azupay: 'payid' };

/** The method a create's payment_method names, its alias read as the method; undefined when none. */
export function paymentMethodNamed(v: string): PaymentMethod | undefined {
  if (isPaymentMethod(v)) return v;
  return Object.hasOwn(METHOD_ALIASES, v) ? METHOD_ALIASES[v] : undefined;
}

export const STATUSES = ['pending', 'paid', 'failed', 'rejected', 'canceled'] as const;
export type Status = (typeof STATUSES)[number];
export type FinalStatus = Exclude<Status, 'pending'>;

/** 1 for merchant-hosted QR, 0 for hosted checkout. */
export type HostType = 0 | 1;

/** A stored transaction: the spec's fields, amounts in minor units, times in epoch milliseconds (UTC). */
export interface Transaction {
  order_id: string;
  user_id: string;
  wallet_id: string;
  merchant_reference: string;
  payment_method: PaymentMethod;
  host_type: HostType;
  amount: number;
  currency: string;
  amount_cny: number | null;
  /** Millionths. */
  currency_rate: number | null;
  product_name: string;
  return_url: string;
  callback_url: string;
  backPage_url: string | null;
  ip: string;
  present_qr: string | null;
  status: Status;
  /** PayID extras, sent in notifications: the rejection reason and the Pay ID. */
  status_message: string | null;
  msgId: string | null;
  /** The payment channel that serves it, and its id there. */
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
  /** The time of the final status; null while pending. */
  pay_time: number | null;
}

/** What a query answers with, and whose wallet key signs it: a third of the row, none of its long URLs. */
export type OrderResult = Pick<
  Transaction,
  | 'order_id'
  | 'user_id'
  | 'wallet_id'
  | 'merchant_reference'
  | 'payment_method'
  | 'status'
  | 'currency'
  | 'amount'
  | 'amount_cny'
  | 'currency_rate'
  | 'created_at'
  | 'pay_time'
  | 'status_message'
  | 'msgId'
>;

const TRANSITIONS: Readonly<Record<Status, readonly Status[]>> = {
  pending: ['paid', 'failed', 'rejected', 'canceled'],
  paid: [],
  failed: [],
  rejected: [],
  canceled: [],
};

export function canTransition(from: Status, to: Status): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isFinal(s: Status): s is FinalStatus {
  return TRANSITIONS[s].length === 0;
}

export function isPending(t: { status: Status }): boolean {
  return t.status === 'pending';
}

/** Only a paid transaction can be refunded. */
export function isPaid(t: { status: Status }): boolean {
  return t.status === 'paid';
}

/** `rejected` is a PayID outcome only: the bank refused the transfer. */
export function outcomeAllowed(method: PaymentMethod, to: FinalStatus): boolean {
  return to !== 'rejected' || method === 'payid';
}

/**
 * The code that refuses an operation on a transaction that has ended (re-create, cancel, gateway
 * data, a late outcome report): 900 when it was paid, 901 for any other end.
 */
export function endedCode(status: FinalStatus): 900 | 901 {
  switch (status) {
    case 'paid':
      return 900;
    case 'failed':
    case 'rejected':
    case 'canceled':
      return 901;
  }
}

/** How a settle's outcome report meets the transaction as it stands. */
export type OutcomeVerdict = 'settle' | 'already' | 'ended';

/**
 * An outcome reported for a transaction: `settle` it while pending; `already` when it already
 * ended with that very outcome (a repeated report); `ended` when it ended otherwise.
 */
export function outcomeVerdict(status: Status, to: FinalStatus): OutcomeVerdict {
  if (canTransition(status, to)) return 'settle';
  return status === to ? 'already' : 'ended';
}

export interface SettleChange {
  to: FinalStatus;
  status_message: string | null;
  msgId: string | null;
  now: number;
}

/**
 * The transaction as a settle leaves it: the final status, the PayID extras, the next status_seq,
 * and pay_time. The store writes exactly these values, and only while the order is still pending at
 * the status_seq it was read with.
 */
export function settledTransaction<T extends Pick<Transaction, 'status_seq'>>(
  read: T,
  change: SettleChange,
): T & Pick<Transaction, 'status' | 'status_message' | 'msgId' | 'status_seq' | 'pay_time' | 'updated_at'> {
  return {
    ...read,
    status: change.to,
    status_message: change.status_message,
    msgId: change.msgId,
    status_seq: read.status_seq + 1,
    pay_time: change.now,
    updated_at: change.now,
  };
}
